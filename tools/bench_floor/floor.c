/*
 * floor.c: a bench-only Valkey module, never loaded by the course, that does
 * the data operations of a sweep and nothing else, so that `make bench` can
 * say how far EMQ.STALLED.CHECK is from the least a sweep could cost.
 *
 *   FLOOR.WRITES <active> <pending> <dead> <prefix> <kinds> <n>
 *
 * Takes the first n members of active by rank (the ones a sweep of n
 * expired leases takes, when every score has passed) and gives the i-th the
 * writes the sweep's verdict kinds[i % len(kinds)] implies, through the
 * module API, one member at a time:
 *
 *   g  ghost      ZsetRem from active
 *   l  lane       nothing
 *   e  exempt     ZsetRem, ZsetAdd to pending (0), HashSet state pending
 *   c  counted    ZsetRem, ZsetAdd to pending (0), HashSet state pending,
 *                 stalled 1
 *   d  dead       ZsetRem, ZsetAdd to dead (now), HashSet state dead,
 *                 stalled 1
 *
 * The bench lays out rows without a stalled field, so stalled 1 is the count
 * the sweep writes. Nothing is read but the members, nothing is decided,
 * checked, replicated, notified or signalled, and the reply is the number of
 * members taken: what is left is the floor.
 *
 *   FLOOR.REMOVE <active> <n> EACH|RANGE
 *
 * Removes the first n members of active, the two ways a sweep could when
 * none of its batch stays in active: EACH with ZsetRem per member (the ids
 * read first, as the sweep's read pass has them), RANGE with one
 * ZREMRANGEBYRANK <active> 0 <n-1> through Call with "!". Replies
 * [removed, µs of the removal alone], so that the reading of the ids is
 * left out of EACH.
 *
 * tools/bench.py builds it with the course's own API header (plus the few
 * calls declared below that the course does not use) and checks that
 * FLOOR.WRITES leaves the dataset as the verb does before it times it.
 */
#include <math.h>
#include <string.h>

#include "valkey_api.h"

typedef struct ValkeyModuleCallReply ValkeyModuleCallReply;
typedef ValkeyModuleCallReply *(*vkm_Call)(ValkeyModuleCtx *ctx, const char *cmd, const char *fmt, ...);
typedef long long (*vkm_CallReplyInteger)(ValkeyModuleCallReply *reply);
typedef unsigned long long (*vkm_MonotonicMicroseconds)(void);

#define FLOOR_API(X)            \
    X(SetModuleAttribs)         \
    X(CreateCommand)            \
    X(AutoMemory)               \
    X(PoolAlloc)                \
    X(Milliseconds)             \
    X(CreateString)             \
    X(FreeString)               \
    X(StringPtrLen)             \
    X(StringToLongLong)         \
    X(OpenKey)                  \
    X(CloseKey)                 \
    X(KeyType)                  \
    X(HashSet)                  \
    X(ZsetAdd)                  \
    X(ZsetRem)                  \
    X(ZsetFirstInScoreRange)    \
    X(ZsetRangeCurrentElement)  \
    X(ZsetRangeNext)            \
    X(ZsetRangeEndReached)      \
    X(ZsetRangeStop)            \
    X(Call)                     \
    X(CallReplyInteger)         \
    X(MonotonicMicroseconds)    \
    X(ReplyWithArray)           \
    X(ReplyWithError)           \
    X(ReplyWithLongLong)        \
    X(WrongArity)

#define DECLARE_API(name) static vkm_##name ValkeyModule_##name;
FLOOR_API(DECLARE_API)
#undef DECLARE_API

static ValkeyModuleString *state, *stalled, *pending_word, *dead_word, *one;

static ValkeyModuleString *literal(const char *text)
{
    return ValkeyModule_CreateString(NULL, text, strlen(text));
}

/* HashSet on the row prefix + id, opened and closed here, as a sweep's write
 * pass needs the row open. */
static void set_row(ValkeyModuleCtx *ctx, ValkeyModuleString *prefix, ValkeyModuleString *id, int kind)
{
    size_t prefix_len, id_len;
    const char *prefix_ptr = ValkeyModule_StringPtrLen(prefix, &prefix_len);
    const char *id_ptr = ValkeyModule_StringPtrLen(id, &id_len);
    char small[256];
    char *buf = prefix_len + id_len <= sizeof small ? small : ValkeyModule_PoolAlloc(ctx, prefix_len + id_len);

    memcpy(buf, prefix_ptr, prefix_len);
    if (id_len > 0) memcpy(buf + prefix_len, id_ptr, id_len);
    ValkeyModuleString *name = ValkeyModule_CreateString(ctx, buf, prefix_len + id_len);
    ValkeyModuleKey *row = ValkeyModule_OpenKey(ctx, name, VKM_READ | VKM_WRITE);
    if (kind == 'e') {
        ValkeyModule_HashSet(row, VKM_HASH_NONE, state, pending_word, NULL);
    } else {
        ValkeyModule_HashSet(row, VKM_HASH_NONE, state, kind == 'd' ? dead_word : pending_word, stalled, one, NULL);
    }
    ValkeyModule_CloseKey(row);
    ValkeyModule_FreeString(ctx, name);
}

/* The first n members of active by score, read before any is written: the set
 * cannot change under its own iterator. */
static ValkeyModuleString **first_members(ValkeyModuleCtx *ctx, ValkeyModuleKey *active, long long n,
                                          long long *taken)
{
    ValkeyModuleString **ids = ValkeyModule_PoolAlloc(ctx, (size_t)n * sizeof *ids);
    *taken = 0;
    ValkeyModule_ZsetFirstInScoreRange(active, -HUGE_VAL, HUGE_VAL, 0, 0);
    while (*taken < n && !ValkeyModule_ZsetRangeEndReached(active)) {
        ids[(*taken)++] = ValkeyModule_ZsetRangeCurrentElement(active, NULL);
        if (!ValkeyModule_ZsetRangeNext(active)) break;
    }
    ValkeyModule_ZsetRangeStop(active);
    return ids;
}

/* FLOOR.WRITES <active> <pending> <dead> <prefix> <kinds> <n>: see the top. */
static int writes_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long n;
    size_t kinds_len;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 7) return ValkeyModule_WrongArity(ctx);
    const char *kinds = ValkeyModule_StringPtrLen(argv[5], &kinds_len);
    if (kinds_len == 0 || strspn(kinds, "glecd") != kinds_len) {
        return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR kinds must be letters of glecd, such as glec");
    }
    if (ValkeyModule_StringToLongLong(argv[6], &n) != VKM_OK || n < 1) {
        return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR n must be a positive integer");
    }
    ValkeyModuleKey *active = ValkeyModule_OpenKey(ctx, argv[1], VKM_READ | VKM_WRITE);
    ValkeyModuleKey *pending = ValkeyModule_OpenKey(ctx, argv[2], VKM_READ | VKM_WRITE);
    ValkeyModuleKey *dead = ValkeyModule_OpenKey(ctx, argv[3], VKM_READ | VKM_WRITE);
    if (ValkeyModule_KeyType(active) != VKM_KEYTYPE_ZSET) {
        return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR active must be a sorted set: lay out the leases first");
    }
    long long now = ValkeyModule_Milliseconds();

    long long taken;
    ValkeyModuleString **ids = first_members(ctx, active, n, &taken);

    for (long long i = 0; i < taken; i++) {
        int kind = kinds[i % (long long)kinds_len];
        if (kind == 'l') continue;
        ValkeyModule_ZsetRem(active, ids[i], NULL);
        if (kind == 'g') continue;
        ValkeyModule_ZsetAdd(kind == 'd' ? dead : pending, kind == 'd' ? (double)now : 0.0, ids[i], NULL);
        set_row(ctx, argv[4], ids[i], kind);
    }
    return ValkeyModule_ReplyWithLongLong(ctx, taken);
}

/* FLOOR.REMOVE <active> <n> EACH|RANGE: see the top. */
static int remove_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long n, removed = 0;
    size_t how_len;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 4) return ValkeyModule_WrongArity(ctx);
    if (ValkeyModule_StringToLongLong(argv[2], &n) != VKM_OK || n < 1) {
        return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR n must be a positive integer");
    }
    const char *how = ValkeyModule_StringPtrLen(argv[3], &how_len);
    int each = how_len == 4 && memcmp(how, "EACH", 4) == 0;
    if (!each && !(how_len == 5 && memcmp(how, "RANGE", 5) == 0)) {
        return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR the way must be EACH or RANGE");
    }
    unsigned long long start;
    if (each) {
        ValkeyModuleKey *active = ValkeyModule_OpenKey(ctx, argv[1], VKM_READ | VKM_WRITE);
        if (ValkeyModule_KeyType(active) != VKM_KEYTYPE_ZSET) {
            return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR active must be a sorted set: lay it out first");
        }
        long long taken;
        ValkeyModuleString **ids = first_members(ctx, active, n, &taken);
        start = ValkeyModule_MonotonicMicroseconds();
        for (long long i = 0; i < taken; i++) {
            int deleted = 0;
            ValkeyModule_ZsetRem(active, ids[i], &deleted);
            removed += deleted;
        }
    } else {
        start = ValkeyModule_MonotonicMicroseconds();
        ValkeyModuleCallReply *reply = ValkeyModule_Call(ctx, "ZREMRANGEBYRANK", "!sll", argv[1], 0LL, n - 1);
        if (reply == NULL) return ValkeyModule_ReplyWithError(ctx, "ERR FLOOR ZREMRANGEBYRANK failed");
        removed = ValkeyModule_CallReplyInteger(reply);
    }
    unsigned long long took = ValkeyModule_MonotonicMicroseconds() - start;
    ValkeyModule_ReplyWithArray(ctx, 2);
    ValkeyModule_ReplyWithLongLong(ctx, removed);
    return ValkeyModule_ReplyWithLongLong(ctx, (long long)took);
}

int ValkeyModule_OnLoad(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    vkm_GetApi get_api;

    (void)argv;
    (void)argc;
    memcpy(&get_api, (const void *)ctx, sizeof get_api);
#define FETCH_API(name) \
    if (get_api("ValkeyModule_" #name, (void *)&ValkeyModule_##name) != VKM_OK) return VKM_ERR;
    FLOOR_API(FETCH_API)
#undef FETCH_API
    ValkeyModule_SetModuleAttribs(ctx, "floor", 1, VKM_APIVER_1);
    state = literal("state");
    stalled = literal("stalled");
    pending_word = literal("pending");
    dead_word = literal("dead");
    one = literal("1");
    if (ValkeyModule_CreateCommand(ctx, "FLOOR.WRITES", writes_command, "write deny-oom", 1, 3, 1) != VKM_OK) {
        return VKM_ERR;
    }
    return ValkeyModule_CreateCommand(ctx, "FLOOR.REMOVE", remove_command, "write deny-oom", 1, 1, 1);
}
