// The guard of CLMDBGuard.h. One sigjmp_buf per guarded call, on the caller's stack; a
// thread-local pointer names the active one. The fault handler jumps back to it when the
// faulting thread is inside a guarded call, and otherwise hands the fault on unchanged.

#include "CLMDBGuard.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

static _Thread_local sigjmp_buf *volatile fog_active_guard = NULL;
static struct sigaction fog_previous_segv;
static struct sigaction fog_previous_bus;
static pthread_once_t fog_install_once = PTHREAD_ONCE_INIT;

static void fog_fault_handler(int signal, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    sigjmp_buf *guard = fog_active_guard;
    if (guard != NULL) {
        fog_active_guard = NULL;
        // SA_NODEFER: the signal is not blocked while this handler runs, so jumping out
        // without restoring a signal mask leaves the thread able to take the next one.
        siglongjmp(*guard, 1);
    }
    // Not a guarded call: put back the handler that was there before and return, so that
    // the faulting instruction runs again and faults into it (by default, ending the process).
    sigaction(signal, signal == SIGBUS ? &fog_previous_bus : &fog_previous_segv, NULL);
}

static void fog_install_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = fog_fault_handler;
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &fog_previous_segv);
    sigaction(SIGBUS, &action, &fog_previous_bus);
}

static void fog_assertion_failed(MDB_env *env, const char *message) {
    (void)env;
    (void)message;
    sigjmp_buf *guard = fog_active_guard;
    if (guard != NULL) {
        fog_active_guard = NULL;
        siglongjmp(*guard, 1);
    }
    // Outside a guard LMDB goes on to abort(), as it would without this function.
}

void fog_mdb_guard_environment(MDB_env *env) {
    pthread_once(&fog_install_once, fog_install_handlers);
    mdb_env_set_assert(env, fog_assertion_failed);
}

/// Reads one byte of every page of `val` (and its last byte), so that bytes past the end of
/// the file or outside the map fault here, inside the guard, and not in the caller. Returns 0
/// for a size no map can hold (a damaged length), 1 otherwise.
static int fog_touch(const MDB_val *val) {
    if (val->mv_size == 0 || val->mv_data == NULL) return 1;
    const volatile unsigned char *bytes = (const volatile unsigned char *)val->mv_data;
    size_t size = val->mv_size;
    if (size > ((size_t)1 << 44) || (uintptr_t)bytes + size < (uintptr_t)bytes) return 0;
    for (size_t offset = 0; offset < size; offset += 4096) (void)bytes[offset];
    (void)bytes[size - 1];
    return 1;
}

// Every guarded call has the same shape: remember the guard outside (none, in practice),
// set this call's, run LMDB, touch what it returned (a length no map can hold is damage too), put the outer guard back. `volatile`
// keeps `outer` valid after a jump back to sigsetjmp.
#define FOG_GUARDED(call, touches)                        \
    sigjmp_buf here;                                      \
    sigjmp_buf *volatile outer = fog_active_guard;        \
    if (sigsetjmp(here, 0) != 0) {                        \
        fog_active_guard = outer;                         \
        return FOG_MDB_DAMAGED;                           \
    }                                                     \
    fog_active_guard = &here;                             \
    int rc = (call);                                      \
    if (rc == MDB_SUCCESS && !(touches)) {                \
        rc = FOG_MDB_DAMAGED;                             \
    }                                                     \
    fog_active_guard = outer;                             \
    return rc;

int fog_mdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data) {
    FOG_GUARDED(mdb_get(txn, dbi, key, data), fog_touch(data))
}

int fog_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned int flags) {
    FOG_GUARDED(mdb_put(txn, dbi, key, data, flags), 1)
}

int fog_mdb_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data) {
    FOG_GUARDED(mdb_del(txn, dbi, key, data), 1)
}

int fog_mdb_drop(MDB_txn *txn, MDB_dbi dbi, int del) {
    FOG_GUARDED(mdb_drop(txn, dbi, del), 1)
}

int fog_mdb_dbi_open(MDB_txn *txn, const char *name, unsigned int flags, MDB_dbi *dbi) {
    FOG_GUARDED(mdb_dbi_open(txn, name, flags, dbi), 1)
}

int fog_mdb_cursor_get(MDB_cursor *cursor, MDB_val *key, MDB_val *data, MDB_cursor_op op) {
    FOG_GUARDED(mdb_cursor_get(cursor, key, data, op), fog_touch(key) && fog_touch(data))
}

int fog_mdb_cursor_del(MDB_cursor *cursor, unsigned int flags) {
    FOG_GUARDED(mdb_cursor_del(cursor, flags), 1)
}

int fog_mdb_cursor_count(MDB_cursor *cursor, size_t *count) {
    FOG_GUARDED(mdb_cursor_count(cursor, count), 1)
}

int fog_mdb_txn_commit(MDB_txn *txn) {
    FOG_GUARDED(mdb_txn_commit(txn), 1)
}
