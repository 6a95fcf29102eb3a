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
typedef struct ValkeyModuleCallReply ValkeyModuleCallReply;
typedef struct ValkeyModuleServerInfoData ValkeyModuleServerInfoData;
typedef struct ValkeyModuleUser ValkeyModuleUser;

/* Return codes of API calls and of OnLoad. */
#define VKM_OK 0
#define VKM_ERR 1

/* The API version passed to SetModuleAttribs. */
#define VKM_APIVER_1 1

/* Call reply types. */
#define VKM_REPLY_STRING 0
#define VKM_REPLY_ERROR 1
#define VKM_REPLY_INTEGER 2
#define VKM_REPLY_ARRAY 3
#define VKM_REPLY_NULL 4

/* Context flags that mark a command not sent by a live client. */
#define VKM_CTX_FLAGS_REPLICATED (1 << 12)
#define VKM_CTX_FLAGS_LOADING (1 << 13)

/* Key permission flags for ACLCheckKeyPermissions. */
#define VKM_KEY_ACCESS (1 << 4)
#define VKM_KEY_UPDATE (1 << 5)

/* The bootstrap: the first field of every context points to this. */
typedef int (*vkm_GetApi)(const char *name, void *out);

typedef int (*vkm_CmdFunc)(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc);

/* One typedef per API function the module fetches. */
typedef void (*vkm_SetModuleAttribs)(ValkeyModuleCtx *ctx, const char *name, int ver, int apiver);
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
typedef void (*vkm_FreeString)(ValkeyModuleCtx *ctx, ValkeyModuleString *str);
typedef const char *(*vkm_StringPtrLen)(const ValkeyModuleString *str, size_t *len);
typedef int (*vkm_StringToLongLong)(const ValkeyModuleString *str, long long *out);

typedef ValkeyModuleCallReply *(*vkm_Call)(ValkeyModuleCtx *ctx, const char *cmd, const char *fmt, ...);
typedef int (*vkm_CallReplyType)(ValkeyModuleCallReply *reply);
typedef long long (*vkm_CallReplyInteger)(ValkeyModuleCallReply *reply);
typedef const char *(*vkm_CallReplyStringPtr)(ValkeyModuleCallReply *reply, size_t *len);
typedef size_t (*vkm_CallReplyLength)(ValkeyModuleCallReply *reply);
typedef ValkeyModuleCallReply *(*vkm_CallReplyArrayElement)(ValkeyModuleCallReply *reply, size_t idx);

typedef int (*vkm_ReplyWithError)(ValkeyModuleCtx *ctx, const char *err);
typedef int (*vkm_ReplyWithArray)(ValkeyModuleCtx *ctx, long len);
typedef int (*vkm_ReplyWithLongLong)(ValkeyModuleCtx *ctx, long long value);
typedef int (*vkm_ReplyWithStringBuffer)(ValkeyModuleCtx *ctx, const char *buf, size_t len);
typedef int (*vkm_ReplyWithNull)(ValkeyModuleCtx *ctx);
typedef int (*vkm_WrongArity)(ValkeyModuleCtx *ctx);

typedef ValkeyModuleString *(*vkm_GetCurrentUserName)(ValkeyModuleCtx *ctx);
typedef ValkeyModuleUser *(*vkm_GetModuleUserFromUserName)(ValkeyModuleString *name);
typedef int (*vkm_ACLCheckKeyPermissions)(ValkeyModuleUser *user, ValkeyModuleString *key, int flags);
typedef void (*vkm_FreeModuleUser)(ValkeyModuleUser *user);

#endif
