/*
 * powerloss.c: an LD_PRELOAD layer that models what a disk holds after a power loss.
 *
 * The process writes to its files as usual (the page cache keeps every write, which is
 * why SIGKILL alone loses nothing). For one file, POWERLOSS_TARGET (an absolute path),
 * the layer also keeps a "disk image", POWERLOSS_IMAGE, that receives a write only when
 * it is synced:
 *
 *   - every write to the target (write, pwrite, pwrite64, writev, pwritev, pwritev64,
 *     ftruncate) is also kept in memory, in order, as pending;
 *   - fsync or fdatasync of the target (through any descriptor), sync() or syncfs()
 *     applies the pending writes to the image, in order, and forgets them;
 *   - a write through a descriptor opened with O_DSYNC or O_SYNC is synced by itself:
 *     it reaches the image at once (and stays pending, so that applying the earlier
 *     pending writes later cannot put older bytes over it).
 *
 * When the process is killed, the pending writes die with it, as the contents of the
 * page cache die with the power: the image holds exactly what was synced. msync and
 * sync_file_range are counted but never make anything durable (LMDB without
 * MDB_WRITEMAP calls neither).
 *
 * POWERLOSS_STATS, when set, names a file rewritten after every sync with counters:
 * writes, bytes written, syncs, bytes synced, O_DSYNC writes, msync and
 * sync_file_range calls.
 *
 * Build: cc -shared -fPIC -O2 -o libpowerloss.so powerloss.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef int (*fsync_fn)(int);
typedef int (*ftruncate_fn)(int, off_t);
typedef int (*msync_fn)(void *, size_t, int);
typedef int (*sfr_fn)(int, off64_t, off64_t, unsigned int);
typedef void (*sync_fn)(void);
typedef int (*syncfs_fn)(int);

static write_fn real_write;
static pwrite_fn real_pwrite, real_pwrite64;
static writev_fn real_writev;
static pwritev_fn real_pwritev, real_pwritev64;
static fsync_fn real_fsync, real_fdatasync;
static ftruncate_fn real_ftruncate, real_ftruncate64;
static msync_fn real_msync;
static sfr_fn real_sync_file_range;
static sync_fn real_sync;
static syncfs_fn real_syncfs;

/* One pending operation: bytes at an offset, or a truncation (data == NULL). */
struct pending {
    off_t offset;
    size_t length;
    unsigned char *data;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char target[PATH_MAX];
static const char *image_path;
static const char *stats_path;
static int image_fd = -1;
static struct pending *pending;
static size_t pending_count, pending_capacity;
static unsigned long long n_writes, n_bytes, n_syncs, n_synced_bytes, n_dsync_writes, n_msync, n_sfr;

__attribute__((constructor)) static void powerloss_init(void) {
    real_write = (write_fn)dlsym(RTLD_NEXT, "write");
    real_pwrite = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
    real_writev = (writev_fn)dlsym(RTLD_NEXT, "writev");
    real_pwritev = (pwritev_fn)dlsym(RTLD_NEXT, "pwritev");
    real_pwritev64 = (pwritev_fn)dlsym(RTLD_NEXT, "pwritev64");
    real_fsync = (fsync_fn)dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (fsync_fn)dlsym(RTLD_NEXT, "fdatasync");
    real_ftruncate = (ftruncate_fn)dlsym(RTLD_NEXT, "ftruncate");
    real_ftruncate64 = (ftruncate_fn)dlsym(RTLD_NEXT, "ftruncate64");
    real_msync = (msync_fn)dlsym(RTLD_NEXT, "msync");
    real_sync_file_range = (sfr_fn)dlsym(RTLD_NEXT, "sync_file_range");
    real_sync = (sync_fn)dlsym(RTLD_NEXT, "sync");
    real_syncfs = (syncfs_fn)dlsym(RTLD_NEXT, "syncfs");
    const char *t = getenv("POWERLOSS_TARGET");
    image_path = getenv("POWERLOSS_IMAGE");
    stats_path = getenv("POWERLOSS_STATS");
    if (t && image_path) {
        strncpy(target, t, sizeof target - 1);
        image_fd = open(image_path, O_RDWR | O_CREAT, 0644);
    }
}

/* Whether fd is open on the target file. */
static int is_target(int fd) {
    if (image_fd < 0 || fd < 0) return 0;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strcmp(path, target) == 0;
}

static int is_dsync(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_DSYNC) == O_DSYNC;
}

static void apply(const struct pending *p) {
    if (p->data == NULL) {
        real_ftruncate(image_fd, p->offset);
        return;
    }
    size_t done = 0;
    while (done < p->length) {
        ssize_t n = real_pwrite(image_fd, p->data + done, p->length - done, p->offset + (off_t)done);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            fprintf(stderr, "powerloss: cannot write the image: %s\n", strerror(errno));
            abort();
        }
        done += (size_t)n;
    }
}

/* Keeps one operation as pending (the lock is held). */
static void record(off_t offset, const void *data, size_t length, int truncate, int dsync) {
    if (pending_count == pending_capacity) {
        pending_capacity = pending_capacity ? pending_capacity * 2 : 256;
        pending = realloc(pending, pending_capacity * sizeof *pending);
        if (!pending) abort();
    }
    struct pending *p = &pending[pending_count++];
    p->offset = offset;
    p->length = length;
    p->data = NULL;
    if (!truncate) {
        p->data = malloc(length ? length : 1);
        if (!p->data) abort();
        memcpy(p->data, data, length);
        n_writes++;
        n_bytes += length;
    }
    if (dsync) {
        n_dsync_writes++;
        apply(p);
    }
}

static void write_stats(void) {
    if (!stats_path) return;
    char text[512];
    int n = snprintf(text, sizeof text,
                     "writes %llu\nbytes %llu\nsyncs %llu\nsynced_bytes %llu\ndsync_writes %llu\nmsync %llu\nsync_file_range %llu\n",
                     n_writes, n_bytes, n_syncs, n_synced_bytes, n_dsync_writes, n_msync, n_sfr);
    /* Written beside and renamed, so that a kill never leaves it half written. */
    char temporary[PATH_MAX];
    snprintf(temporary, sizeof temporary, "%s.new", stats_path);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        real_write(fd, text, (size_t)n);
        close(fd);
        rename(temporary, stats_path);
    }
}

/* Makes every pending operation durable: applies them to the image in order. */
static void flush_pending(void) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < pending_count; i++) {
        apply(&pending[i]);
        if (pending[i].data) n_synced_bytes += pending[i].length;
        free(pending[i].data);
    }
    pending_count = 0;
    n_syncs++;
    write_stats();
    pthread_mutex_unlock(&lock);
}

static void record_iov(int fd, off_t offset, const struct iovec *iov, int count, ssize_t written) {
    int dsync = is_dsync(fd);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count && written > 0; i++) {
        size_t length = iov[i].iov_len < (size_t)written ? iov[i].iov_len : (size_t)written;
        record(offset, iov[i].iov_base, length, 0, dsync);
        offset += (off_t)length;
        written -= (ssize_t)length;
    }
    pthread_mutex_unlock(&lock);
}

static void record_one(int fd, off_t offset, const void *data, ssize_t written) {
    if (written <= 0) return;
    int dsync = is_dsync(fd);
    pthread_mutex_lock(&lock);
    record(offset, data, (size_t)written, 0, dsync);
    pthread_mutex_unlock(&lock);
}

ssize_t write(int fd, const void *buf, size_t count) {
    if (!is_target(fd)) return real_write(fd, buf, count);
    off_t offset = lseek(fd, 0, SEEK_CUR);
    ssize_t n = real_write(fd, buf, count);
    record_one(fd, offset, buf, n);
    return n;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    ssize_t n = real_pwrite(fd, buf, count, offset);
    if (is_target(fd)) record_one(fd, offset, buf, n);
    return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    ssize_t n = real_pwrite64(fd, buf, count, offset);
    if (is_target(fd)) record_one(fd, offset, buf, n);
    return n;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    if (!is_target(fd)) return real_writev(fd, iov, count);
    off_t offset = lseek(fd, 0, SEEK_CUR);
    ssize_t n = real_writev(fd, iov, count);
    record_iov(fd, offset, iov, count, n);
    return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    ssize_t n = real_pwritev(fd, iov, count, offset);
    if (is_target(fd)) record_iov(fd, offset, iov, count, n);
    return n;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t offset) {
    ssize_t n = real_pwritev64(fd, iov, count, offset);
    if (is_target(fd)) record_iov(fd, offset, iov, count, n);
    return n;
}

int ftruncate(int fd, off_t length) {
    int rc = real_ftruncate(fd, length);
    if (rc == 0 && is_target(fd)) {
        pthread_mutex_lock(&lock);
        record(length, NULL, 0, 1, 0);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

int ftruncate64(int fd, off_t length) {
    int rc = real_ftruncate64(fd, length);
    if (rc == 0 && is_target(fd)) {
        pthread_mutex_lock(&lock);
        record(length, NULL, 0, 1, 0);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

int fsync(int fd) {
    int rc = real_fsync(fd);
    if (rc == 0 && is_target(fd)) flush_pending();
    return rc;
}

int fdatasync(int fd) {
    int rc = real_fdatasync(fd);
    if (rc == 0 && is_target(fd)) flush_pending();
    return rc;
}

void sync(void) {
    real_sync();
    if (image_fd >= 0) flush_pending();
}

int syncfs(int fd) {
    int rc = real_syncfs(fd);
    if (rc == 0 && image_fd >= 0) flush_pending();
    return rc;
}

int msync(void *address, size_t length, int flags) {
    __atomic_add_fetch(&n_msync, 1, __ATOMIC_RELAXED);
    return real_msync(address, length, flags);
}

int sync_file_range(int fd, off64_t offset, off64_t count, unsigned int flags) {
    if (is_target(fd)) __atomic_add_fetch(&n_sfr, 1, __ATOMIC_RELAXED);
    return real_sync_file_range(fd, offset, count, flags);
}
