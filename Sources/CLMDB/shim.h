#ifndef FOGKIT_CLMDB_SHIM_H
#define FOGKIT_CLMDB_SHIM_H
#include <lmdb.h>
#endif
