#ifndef FOGKIT_CLMDB_GUARD_H
#define FOGKIT_CLMDB_GUARD_H

// Guarded LMDB calls: LMDB trusts the page numbers it finds in its file. In a damaged file
// it can follow one past the end of the file (SIGBUS), to a wild address (SIGSEGV), or to a
// page of the wrong kind (an assertion, then abort()). Each call below runs the LMDB call of
// the same name under a per-thread guard: such a fault, or an LMDB assertion, inside the call
// ends the call with FOG_MDB_DAMAGED instead of ending the process. The bytes a call hands
// back (a key, a value) are touched inside the guard too (every page of them), so that a
// caller reading them later cannot fault. A fault outside a guarded call is not handled:
// it reaches the handler that was installed before (the default one ends the process).
//
// After FOG_MDB_DAMAGED the transaction is unusable: the caller must only abort it.

#include <lmdb.h>

/// Returned by a guarded call that LMDB could not finish because the file is damaged.
/// Outside LMDB's own codes (MDB_KEYEXIST -30799 … MDB_LAST_ERRCODE) and errno values.
#define FOG_MDB_DAMAGED (-30600)

/// Installs the fault handlers (once per process; later calls do nothing) and makes LMDB's
/// assertions in `env` end the guarded call instead of the process.
void fog_mdb_guard_environment(MDB_env *env);

int fog_mdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);
int fog_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned int flags);
int fog_mdb_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);
int fog_mdb_drop(MDB_txn *txn, MDB_dbi dbi, int del);
int fog_mdb_dbi_open(MDB_txn *txn, const char *name, unsigned int flags, MDB_dbi *dbi);
int fog_mdb_cursor_get(MDB_cursor *cursor, MDB_val *key, MDB_val *data, MDB_cursor_op op);
int fog_mdb_cursor_del(MDB_cursor *cursor, unsigned int flags);
int fog_mdb_cursor_count(MDB_cursor *cursor, size_t *count);
int fog_mdb_txn_commit(MDB_txn *txn);

#endif
