/*
 * valkey_api.h: the slice of the Valkey module API that trafikey.c uses.
 *
 * Written for this course from the documented ABI, not copied from Valkey's
 * own header. A module receives a context whose first field is the server's
 * GetApi function; every other API function is looked up by name through it
 * at load time and kept in a function pointer. The module therefore links
 * against nothing from the server, which is also what lets ctypes open the
 * built library outside a server to test its pure functions.
 */
#ifndef TRAFIKEY_VALKEY_API_H
#define TRAFIKEY_VALKEY_API_H

#include <stddef.h>

/* Opaque server objects: the module only ever holds pointers to them. */
typedef struct ValkeyModuleCtx ValkeyModuleCtx;
typedef struct ValkeyModuleString ValkeyModuleString;
typedef struct ValkeyModuleKey ValkeyModuleKey;
typedef struct ValkeyModuleServerInfoData ValkeyModuleServerInfoData;
typedef struct ValkeyModuleUser ValkeyModuleUser;
typedef struct ValkeyModuleInfoCtx ValkeyModuleInfoCtx;

/* Return codes of API calls and of OnLoad. */
#define VKM_OK 0
#define VKM_ERR 1

/* The API version passed to SetModuleAttribs. */
#define VKM_APIVER_1 1

/* OpenKey modes. */
#define VKM_READ (1 << 0)
#define VKM_WRITE (1 << 1)

/* KeyType answers. */
#define VKM_KEYTYPE_EMPTY 0
#define VKM_KEYTYPE_HASH 3
#define VKM_KEYTYPE_ZSET 5

/* HashGet and HashSet flags. */
#define VKM_HASH_NONE 0

/* ZsetAdd output flags: what the add did to the set. */
#define VKM_ZADD_ADDED (1 << 2)
#define VKM_ZADD_UPDATED (1 << 3)

/* Keyspace notification classes (notify-keyspace-events g, h and z). */
#define VKM_NOTIFY_GENERIC (1 << 2)
#define VKM_NOTIFY_HASH (1 << 6)
#define VKM_NOTIFY_ZSET (1 << 7)

/* SetModuleOptions: closing a key opened for writing no longer signals it
 * modified; the module signals the keys it really changed. */
#define VKM_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED (1 << 1)

/* Context flags that mark a command not sent by a live client. */
#define VKM_CTX_FLAGS_REPLICATED (1 << 12)
#define VKM_CTX_FLAGS_LOADING (1 << 13)

/* Key permission flags for ACLCheckKeyPermissions. */
#define VKM_KEY_ACCESS (1 << 4)
#define VKM_KEY_UPDATE (1 << 5)

/* The bootstrap: the first field of every context points to this. */
typedef int (*vkm_GetApi)(const char *name, void *out);

typedef int (*vkm_CmdFunc)(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc);

/* Called by INFO (for_crash_report 0) and by the crash report (1). */
typedef void (*vkm_InfoFunc)(ValkeyModuleInfoCtx *ctx, int for_crash_report);

/* One typedef per API function the module fetches. */
typedef void (*vkm_SetModuleAttribs)(ValkeyModuleCtx *ctx, const char *name, int ver, int apiver);
typedef void (*vkm_SetModuleOptions)(ValkeyModuleCtx *ctx, int options);
typedef int (*vkm_IsModuleNameBusy)(const char *name);
typedef int (*vkm_CreateCommand)(ValkeyModuleCtx *ctx, const char *name, vkm_CmdFunc fn,
                                 const char *flags, int firstkey, int lastkey, int keystep);
typedef void (*vkm_Log)(ValkeyModuleCtx *ctx, const char *level, const char *fmt, ...);
typedef ValkeyModuleServerInfoData *(*vkm_GetServerInfo)(ValkeyModuleCtx *ctx, const char *section);
typedef const char *(*vkm_ServerInfoGetFieldC)(ValkeyModuleServerInfoData *data, const char *field);
typedef void (*vkm_FreeServerInfo)(ValkeyModuleCtx *ctx, ValkeyModuleServerInfoData *data);

typedef void (*vkm_AutoMemory)(ValkeyModuleCtx *ctx);
typedef void *(*vkm_PoolAlloc)(ValkeyModuleCtx *ctx, size_t bytes);
typedef long long (*vkm_Milliseconds)(void);
typedef int (*vkm_GetContextFlags)(ValkeyModuleCtx *ctx);

typedef ValkeyModuleString *(*vkm_CreateString)(ValkeyModuleCtx *ctx, const char *ptr, size_t len);
typedef ValkeyModuleString *(*vkm_CreateStringFromLongLong)(ValkeyModuleCtx *ctx, long long value);
typedef void (*vkm_FreeString)(ValkeyModuleCtx *ctx, ValkeyModuleString *str);
typedef const char *(*vkm_StringPtrLen)(const ValkeyModuleString *str, size_t *len);
typedef int (*vkm_StringToLongLong)(const ValkeyModuleString *str, long long *out);

typedef ValkeyModuleKey *(*vkm_OpenKey)(ValkeyModuleCtx *ctx, ValkeyModuleString *name, int mode);
typedef void (*vkm_CloseKey)(ValkeyModuleKey *key);
typedef int (*vkm_KeyType)(ValkeyModuleKey *key);
typedef size_t (*vkm_ValueLength)(ValkeyModuleKey *key);
typedef int (*vkm_HashGet)(ValkeyModuleKey *key, int flags, ...);
typedef int (*vkm_HashSet)(ValkeyModuleKey *key, int flags, ...);
typedef int (*vkm_ZsetAdd)(ValkeyModuleKey *key, double score, ValkeyModuleString *member, int *flags);
typedef int (*vkm_ZsetRem)(ValkeyModuleKey *key, ValkeyModuleString *member, int *deleted);
typedef int (*vkm_ZsetScore)(ValkeyModuleKey *key, ValkeyModuleString *member, double *score);
typedef int (*vkm_ZsetFirstInScoreRange)(ValkeyModuleKey *key, double min, double max, int minex, int maxex);
typedef ValkeyModuleString *(*vkm_ZsetRangeCurrentElement)(ValkeyModuleKey *key, double *score);
typedef int (*vkm_ZsetRangeNext)(ValkeyModuleKey *key);
typedef int (*vkm_ZsetRangeEndReached)(ValkeyModuleKey *key);
typedef void (*vkm_ZsetRangeStop)(ValkeyModuleKey *key);

typedef int (*vkm_Replicate)(ValkeyModuleCtx *ctx, const char *cmd, const char *fmt, ...);
typedef int (*vkm_NotifyKeyspaceEvent)(ValkeyModuleCtx *ctx, int type, const char *event,
                                       ValkeyModuleString *key);
typedef int (*vkm_SignalModifiedKey)(ValkeyModuleCtx *ctx, ValkeyModuleString *name);

typedef int (*vkm_ReplyWithError)(ValkeyModuleCtx *ctx, const char *err);
typedef int (*vkm_ReplyWithArray)(ValkeyModuleCtx *ctx, long len);
typedef int (*vkm_ReplyWithLongLong)(ValkeyModuleCtx *ctx, long long value);
typedef int (*vkm_ReplyWithString)(ValkeyModuleCtx *ctx, ValkeyModuleString *str);
typedef int (*vkm_ReplyWithNull)(ValkeyModuleCtx *ctx);
typedef int (*vkm_WrongArity)(ValkeyModuleCtx *ctx);

typedef ValkeyModuleString *(*vkm_GetCurrentUserName)(ValkeyModuleCtx *ctx);
typedef ValkeyModuleUser *(*vkm_GetModuleUserFromUserName)(ValkeyModuleString *name);
typedef int (*vkm_ACLCheckKeyPermissions)(ValkeyModuleUser *user, ValkeyModuleString *key, int flags);
typedef void (*vkm_FreeModuleUser)(ValkeyModuleUser *user);

/* InfoAddSection's name is appended to the module's name ("" names the
 * module's own section); each field is printed as <module>_<field>. */
typedef int (*vkm_RegisterInfoFunc)(ValkeyModuleCtx *ctx, vkm_InfoFunc cb);
typedef int (*vkm_InfoAddSection)(ValkeyModuleInfoCtx *ctx, const char *name);
typedef int (*vkm_InfoAddFieldLongLong)(ValkeyModuleInfoCtx *ctx, const char *field, long long value);

#endif
