/*
 * trafikey.c: the course's native Valkey module, the four EMQ verbs of the
 * lease-epoch dive.
 *
 * A lease granted or extended by this module carries the run_id of the server
 * process that granted it (the row field lease_epoch). The stall sweep reads
 * that stamp to tell a lease that ran out under a live server (the worker
 * stalled: counted against max_stalled) from one that crossed a restart (the
 * server went away: sent back to pending uncounted).
 *
 *   EMQ.CLAIM          claim the head of pending; stamps the row
 *   EMQ.EXTEND         extend one live lease; re-stamps the row
 *   EMQ.EXTENDS        extend many live leases under one now; re-stamps them
 *   EMQ.STALLED.CHECK  sweep expired leases; the only reader of the stamp
 *
 * Layout: the pure functions first (no context; exported so that ctypes can
 * test them outside a server), then helpers that talk to the server, then
 * the command handlers, then OnLoad. Every handler checks in the same order:
 * arity, arguments, declared key types, a read pass that decides everything
 * and may refuse, a write pass that cannot be refused, one reply. So a
 * refusal never leaves a partial write. All writes go through Call with the
 * '!' flag: replicas and the AOF receive the resulting HSET/ZADD/ZREM (with
 * the granting process's run_id and deadline), never the verb, whose replay
 * would stamp the replaying process instead.
 */
#include <stddef.h>
#include <string.h>

#include "valkey_api.h"

/* CONFIG_RUN_ID_SIZE in Valkey's server.h. */
#define RUN_ID_LEN 40

/* Scores are doubles: integers up to 2^53 are exact. */
#define EXACT_LIMIT (1LL << 53)

#define DEFAULT_LIMIT 1000

/* Key types, numbered as the module API's KeyType numbers them. */
#define TYPE_NONE 0
#define TYPE_HASH 3
#define TYPE_ZSET 5
#define TYPE_OTHER 6

/* ------------------------------------------------------------------------ */
/* Pure functions                                                           */
/* ------------------------------------------------------------------------ */

/* A run_id as Valkey prints it: exactly 40 characters of 0-9a-f. */
int trafikey_valid_run_id(const char *id, size_t len)
{
    if (id == NULL || len != RUN_ID_LEN) return 0;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    }
    return 1;
}

/* The one rule the sweep applies: an expired lease crossed a restart (and is
 * not counted) when its stored lease_epoch is missing (epoch NULL) or differs
 * byte for byte from the current run_id. The stored shape is not re-checked:
 * it was a valid run_id when a verb wrote it. */
int trafikey_exempt(const char *epoch, size_t epoch_len, const char *current, size_t current_len)
{
    if (epoch == NULL) return 1;
    if (epoch_len != current_len) return 1;
    return epoch_len != 0 && memcmp(epoch, current, epoch_len) != 0;
}

/* A row counter (attempts, stalled) as stored: a canonical non-negative
 * decimal integer (no sign, no leading zero, no spaces; the form Valkey's
 * string2ll accepts) of at most 2^53 - 1, so that the +1 the verbs write is
 * still an exact integer. An absent field counts as 0; the caller decides
 * that, since only it knows whether the field was there. 1 ok, 0 bad. */
int trafikey_counter(const char *s, size_t len, long long *out)
{
    const long long max = EXACT_LIMIT - 1;
    long long value = 0;

    if (s == NULL || len == 0) return 0;
    if (len > 1 && s[0] == '0') return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        long long digit = s[i] - '0';
        if (value > (max - digit) / 10) return 0;
        value = value * 10 + digit;
    }
    *out = value;
    return 1;
}

/* What the sweep has read so far about one expired member's row. */
struct trafikey_seen {
    int type_read;
    int type; /* 0 none, 1 string, 2 list, 3 hash, 4 set, 5 zset, 6 any other */
    int group_read;
    int group_present;
    int epoch_read;
    const char *epoch; /* NULL: field absent */
    size_t epoch_len;
    int stalled_read;
    const char *stalled; /* NULL: field absent */
    size_t stalled_len;
};

enum trafikey_need { NEED_NOTHING = 0, NEED_TYPE, NEED_GROUP, NEED_EPOCH, NEED_STALLED };

enum trafikey_verdict {
    VERDICT_NONE = 0,
    VERDICT_GHOST,
    VERDICT_LANE,
    VERDICT_EXEMPT,
    VERDICT_RECOVERED,
    VERDICT_DEAD,
    VERDICT_WRONGTYPE,
    VERDICT_NOT_INTEGER
};

struct trafikey_step {
    int need;          /* enum trafikey_need; NEED_NOTHING once decided */
    int verdict;       /* enum trafikey_verdict, when decided */
    long long stalled; /* the stalled value to write, for recovered and dead */
};

/* The sweep's decision for one expired member, asked again after each read.
 * It names the next read it needs, or a verdict as soon as the reads so far
 * decide: no row is a ghost, a non-hash row refuses the sweep, a lane row is
 * left alone, a foreign or missing stamp is exempt, and only then is the
 * stall counted. Reading lazily keeps a lane's or an exempt row's stalled
 * field out of the decision, whatever it holds. */
void trafikey_decide_member(const char *run_id, size_t run_id_len, long long max_stalled,
                            const struct trafikey_seen *seen, struct trafikey_step *out)
{
    long long stalled = 0;

    out->need = NEED_NOTHING;
    out->verdict = VERDICT_NONE;
    out->stalled = 0;

    if (!seen->type_read) {
        out->need = NEED_TYPE;
    } else if (seen->type == TYPE_NONE) {
        out->verdict = VERDICT_GHOST;
    } else if (seen->type != TYPE_HASH) {
        out->verdict = VERDICT_WRONGTYPE;
    } else if (!seen->group_read) {
        out->need = NEED_GROUP;
    } else if (seen->group_present) {
        out->verdict = VERDICT_LANE;
    } else if (!seen->epoch_read) {
        out->need = NEED_EPOCH;
    } else if (trafikey_exempt(seen->epoch, seen->epoch_len, run_id, run_id_len)) {
        out->verdict = VERDICT_EXEMPT;
    } else if (!seen->stalled_read) {
        out->need = NEED_STALLED;
    } else if (seen->stalled != NULL && !trafikey_counter(seen->stalled, seen->stalled_len, &stalled)) {
        out->verdict = VERDICT_NOT_INTEGER;
    } else {
        out->stalled = stalled + 1;
        out->verdict = out->stalled < max_stalled ? VERDICT_RECOVERED : VERDICT_DEAD;
    }
}

/* now_ms + lease_ms as a deadline, when it is an exact score (<= 2^53). */
static int deadline_in_range(long long now, long long lease, long long *deadline)
{
    if (now < 0 || lease > EXACT_LIMIT - now) return 0;
    *deadline = now + lease;
    return 1;
}

/* The TYPE command's answer as a key type number. */
static int type_code(const char *name, size_t len)
{
    static const char *const names[] = {"none", "string", "list", "hash", "set", "zset"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
    }
    return TYPE_OTHER;
}

/* ASCII case-insensitive equality of a buffer with a lower-case word. */
static int word_is(const char *buf, size_t len, const char *lower)
{
    if (strlen(lower) != len) return 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != lower[i]) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The server's API, fetched by name at load                               */
/* ------------------------------------------------------------------------ */

#define TRAFIKEY_API(X)        \
    X(Log)                     \
    X(SetModuleAttribs)        \
    X(IsModuleNameBusy)        \
    X(CreateCommand)           \
    X(GetServerInfo)           \
    X(ServerInfoGetFieldC)     \
    X(FreeServerInfo)          \
    X(AutoMemory)              \
    X(PoolAlloc)               \
    X(Milliseconds)            \
    X(GetContextFlags)         \
    X(CreateString)            \
    X(FreeString)              \
    X(StringPtrLen)            \
    X(StringToLongLong)        \
    X(Call)                    \
    X(CallReplyType)           \
    X(CallReplyInteger)        \
    X(CallReplyStringPtr)      \
    X(CallReplyLength)         \
    X(CallReplyArrayElement)   \
    X(ReplyWithError)          \
    X(ReplyWithArray)          \
    X(ReplyWithLongLong)       \
    X(ReplyWithStringBuffer)   \
    X(ReplyWithNull)           \
    X(WrongArity)              \
    X(GetCurrentUserName)      \
    X(GetModuleUserFromUserName) \
    X(ACLCheckKeyPermissions)  \
    X(FreeModuleUser)

#define DECLARE_API(name) static vkm_##name ValkeyModule_##name;
TRAFIKEY_API(DECLARE_API)
#undef DECLARE_API

/* Fetches every API function the module uses. Returns NULL, or the name of
 * the first one the server does not provide. */
static const char *bind_api(ValkeyModuleCtx *ctx)
{
    vkm_GetApi get_api;

    /* The context's first field is the server's GetApi. */
    memcpy(&get_api, (const void *)ctx, sizeof get_api);
#define FETCH_API(name)                                                                 \
    if (get_api("ValkeyModule_" #name, (void *)&ValkeyModule_##name) != VKM_OK) {      \
        return "ValkeyModule_" #name;                                                   \
    }
    TRAFIKEY_API(FETCH_API)
#undef FETCH_API
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The epoch                                                                */
/* ------------------------------------------------------------------------ */

/* The run_id read at the first successful load, for the life of the process. */
static char cached_run_id[RUN_ID_LEN];
static int run_id_cached;

/* Reads INFO server run_id through the server-info calls (not by sending
 * INFO) and caches it; a second load keeps the first value, since one
 * process has one run_id. Returns NULL, or why the epoch was not loaded. */
static const char *load_epoch(ValkeyModuleCtx *ctx)
{
    const char *reason = NULL;
    ValkeyModuleServerInfoData *info = ValkeyModule_GetServerInfo(ctx, "server");

    if (info == NULL) return "INFO server could not be read";
    const char *value = ValkeyModule_ServerInfoGetFieldC(info, "run_id");
    if (value == NULL) {
        reason = "INFO server has no run_id field";
    } else if (!trafikey_valid_run_id(value, strlen(value))) {
        reason = "run_id is not 40 characters of 0-9a-f";
    } else if (!run_id_cached) {
        memcpy(cached_run_id, value, RUN_ID_LEN);
        run_id_cached = 1;
    }
    ValkeyModule_FreeServerInfo(ctx, info);
    return reason;
}

/* ------------------------------------------------------------------------ */
/* Talking to the server                                                    */
/* ------------------------------------------------------------------------ */

#define ERR_LEASE "ERR EMQ lease must be a positive integer"
#define ERR_MAX_STALLED "ERR EMQ max_stalled must be a positive integer"
#define ERR_LIMIT "ERR EMQ limit must be a positive integer"
#define ERR_ATTEMPT "ERR EMQ attempt must be a non-negative integer"
#define ERR_SYNTAX "ERR EMQ syntax error"
#define ERR_DEADLINE "ERR EMQ deadline out of range"
#define ERR_NOT_INTEGER "ERR EMQ row field is not an integer"
#define ERR_HOST "ERR EMQ host call failed"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOPERM "NOPERM No permissions to access a key"

/* Why a read pass refused, or REFUSE_NONE. */
enum refusal { REFUSE_NONE = 0, REFUSE_WRONGTYPE, REFUSE_NOPERM, REFUSE_NOT_INTEGER, REFUSE_HOST };

static int reply_refusal(ValkeyModuleCtx *ctx, enum refusal why)
{
    switch (why) {
    case REFUSE_WRONGTYPE: return ValkeyModule_ReplyWithError(ctx, ERR_WRONGTYPE);
    case REFUSE_NOPERM: return ValkeyModule_ReplyWithError(ctx, ERR_NOPERM);
    case REFUSE_NOT_INTEGER: return ValkeyModule_ReplyWithError(ctx, ERR_NOT_INTEGER);
    default: return ValkeyModule_ReplyWithError(ctx, ERR_HOST);
    }
}

/* Argument integers follow the server's strict rule (StringToLongLong). */
static int parse_at_least(ValkeyModuleString *arg, long long min, long long *out)
{
    return ValkeyModule_StringToLongLong(arg, out) == VKM_OK && *out >= min;
}

/* A call that reached its command and did not answer an error. */
static int call_ok(ValkeyModuleCallReply *reply)
{
    return reply != NULL && ValkeyModule_CallReplyType(reply) != VKM_REPLY_ERROR;
}

/* The type of a key (TYPE_NONE when missing); 0 when the call failed. */
static int read_type(ValkeyModuleCtx *ctx, ValkeyModuleString *key, int *type)
{
    size_t len;
    ValkeyModuleCallReply *reply = ValkeyModule_Call(ctx, "TYPE", "Es", key);

    if (!call_ok(reply) || ValkeyModule_CallReplyType(reply) != VKM_REPLY_STRING) return 0;
    const char *name = ValkeyModule_CallReplyStringPtr(reply, &len);
    *type = type_code(name, len);
    return 1;
}

/* A declared sorted-set key must be a sorted set or missing. */
static enum refusal check_zset(ValkeyModuleCtx *ctx, ValkeyModuleString *key)
{
    int type;

    if (!read_type(ctx, key, &type)) return REFUSE_HOST;
    return (type == TYPE_NONE || type == TYPE_ZSET) ? REFUSE_NONE : REFUSE_WRONGTYPE;
}

/* A hash field: 1 present (ptr and len set), 0 absent, -1 the call failed.
 * The pointer stays valid until the command returns (AutoMemory). */
static int read_field(ValkeyModuleCtx *ctx, ValkeyModuleString *row, const char *field,
                      const char **ptr, size_t *len)
{
    ValkeyModuleCallReply *reply = ValkeyModule_Call(ctx, "HGET", "Esc", row, field);

    if (!call_ok(reply)) return -1;
    int type = ValkeyModule_CallReplyType(reply);
    if (type == VKM_REPLY_NULL) return 0;
    if (type != VKM_REPLY_STRING) return -1;
    *ptr = ValkeyModule_CallReplyStringPtr(reply, len);
    return 1;
}

/* A row counter field: absent is 0, a present value must pass trafikey_counter. */
static enum refusal read_counter(ValkeyModuleCtx *ctx, ValkeyModuleString *row, const char *field,
                                 long long *value)
{
    const char *ptr = NULL;
    size_t len = 0;
    int found = read_field(ctx, row, field, &ptr, &len);

    if (found < 0) return REFUSE_HOST;
    *value = 0;
    if (found == 1 && !trafikey_counter(ptr, len, value)) return REFUSE_NOT_INTEGER;
    return REFUSE_NONE;
}

/* The row key of a job: prefix followed by the id, binary safe. */
static ValkeyModuleString *row_key(ValkeyModuleCtx *ctx, ValkeyModuleString *prefix, const char *id,
                                   size_t id_len)
{
    size_t prefix_len;
    const char *prefix_ptr = ValkeyModule_StringPtrLen(prefix, &prefix_len);
    char *buf = ValkeyModule_PoolAlloc(ctx, prefix_len + id_len + 1);

    memcpy(buf, prefix_ptr, prefix_len);
    if (id_len > 0) memcpy(buf + prefix_len, id, id_len);
    return ValkeyModule_CreateString(ctx, buf, prefix_len + id_len);
}

/* The server checks the ACL of declared keys only; a row the module derives
 * from an id or takes as an argument is checked here, for read and update,
 * before it is read. Commands from the primary's link and from AOF loading
 * were already checked where they first ran, and have no user to ask. */
static int row_permitted(ValkeyModuleCtx *ctx, ValkeyModuleString *row)
{
    if (ValkeyModule_GetContextFlags(ctx) & (VKM_CTX_FLAGS_REPLICATED | VKM_CTX_FLAGS_LOADING)) return 1;
    ValkeyModuleString *name = ValkeyModule_GetCurrentUserName(ctx);
    if (name == NULL) return 1;
    ValkeyModuleUser *user = ValkeyModule_GetModuleUserFromUserName(name);
    ValkeyModule_FreeString(ctx, name);
    if (user == NULL) return 0;
    int permitted =
        ValkeyModule_ACLCheckKeyPermissions(user, row, VKM_KEY_ACCESS | VKM_KEY_UPDATE) == VKM_OK;
    ValkeyModule_FreeModuleUser(user);
    return permitted;
}

/* The liveness test of EXTEND and EXTENDS on a row already known to be a
 * hash: id in active, state exactly "active", attempts equal to attempt.
 * attempts is read (and must be an integer) only when the rest holds, so a
 * stale worker meets a plain 0, not an error about a row it no longer owns. */
static enum refusal lease_is_live(ValkeyModuleCtx *ctx, ValkeyModuleString *active,
                                  ValkeyModuleString *row, ValkeyModuleString *id, long long attempt,
                                  int *live)
{
    const char *state = NULL;
    size_t state_len = 0;
    long long attempts;

    *live = 0;
    ValkeyModuleCallReply *score = ValkeyModule_Call(ctx, "ZSCORE", "Ess", active, id);
    if (!call_ok(score)) return REFUSE_HOST;
    if (ValkeyModule_CallReplyType(score) == VKM_REPLY_NULL) return REFUSE_NONE;
    int found = read_field(ctx, row, "state", &state, &state_len);
    if (found < 0) return REFUSE_HOST;
    if (found == 0 || state_len != 6 || memcmp(state, "active", 6) != 0) return REFUSE_NONE;
    enum refusal why = read_counter(ctx, row, "attempts", &attempts);
    if (why != REFUSE_NONE) return why;
    *live = attempts == attempt;
    return REFUSE_NONE;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* EMQ.CLAIM <pending> <active> <prefix> <lease_ms>
 *
 * Claims the head of pending (lowest score, then lowest id bytewise) and
 * replies [id, attempts, deadline_ms], or nil when nothing is claimable.
 * A head id with no row is a ghost: it is dropped from pending and the claim
 * moves on. A head row that is not a hash refuses the whole claim with
 * WRONGTYPE, and the ghosts found before it stay (nothing is written). The
 * row gets state, attempts and lease_epoch in one HSET, so an active row is
 * never without the stamp of the process that granted its lease. */
static int claim_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long lease, now, deadline, attempts = 0;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 5) return ValkeyModule_WrongArity(ctx);
    if (!parse_at_least(argv[4], 1, &lease)) return ValkeyModule_ReplyWithError(ctx, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return ValkeyModule_ReplyWithError(ctx, ERR_DEADLINE);
    if ((why = check_zset(ctx, argv[1])) != REFUSE_NONE) return reply_refusal(ctx, why);
    if ((why = check_zset(ctx, argv[2])) != REFUSE_NONE) return reply_refusal(ctx, why);
    if (!run_id_cached) return ValkeyModule_ReplyWithError(ctx, ERR_HOST);

    /* Read pass: walk pending by rank until a hash row; ghosts pile up in
     * removals, and the claimed id joins them for one ZREM. */
    ValkeyModuleString **removals = NULL;
    size_t removal_count = 0, removal_cap = 0;
    ValkeyModuleString *claimed = NULL, *row = NULL;
    for (long long rank = 0;; rank++) {
        size_t id_len;
        int type;
        ValkeyModuleCallReply *head = ValkeyModule_Call(ctx, "ZRANGE", "Esll", argv[1], rank, rank);
        if (!call_ok(head) || ValkeyModule_CallReplyType(head) != VKM_REPLY_ARRAY) {
            return reply_refusal(ctx, REFUSE_HOST);
        }
        if (ValkeyModule_CallReplyLength(head) == 0) break;
        const char *id = ValkeyModule_CallReplyStringPtr(ValkeyModule_CallReplyArrayElement(head, 0), &id_len);
        ValkeyModuleString *candidate = row_key(ctx, argv[3], id, id_len);
        if (!row_permitted(ctx, candidate)) return reply_refusal(ctx, REFUSE_NOPERM);
        if (!read_type(ctx, candidate, &type)) return reply_refusal(ctx, REFUSE_HOST);
        if (type != TYPE_NONE && type != TYPE_HASH) return reply_refusal(ctx, REFUSE_WRONGTYPE);
        if (type == TYPE_HASH) {
            if ((why = read_counter(ctx, candidate, "attempts", &attempts)) != REFUSE_NONE) {
                return reply_refusal(ctx, why);
            }
            row = candidate;
        }
        if (removal_count == removal_cap) {
            size_t cap = removal_cap ? removal_cap * 2 : 8;
            ValkeyModuleString **grown = ValkeyModule_PoolAlloc(ctx, cap * sizeof *grown);
            if (removal_count > 0) memcpy(grown, removals, removal_count * sizeof *grown);
            removals = grown;
            removal_cap = cap;
        }
        removals[removal_count++] = ValkeyModule_CreateString(ctx, id, id_len);
        if (row != NULL) {
            claimed = removals[removal_count - 1];
            break;
        }
    }

    /* Write pass. */
    if (removal_count > 0) {
        ValkeyModuleCallReply *zrem = ValkeyModule_Call(ctx, "ZREM", "!Esv", argv[1], removals, removal_count);
        if (!call_ok(zrem)) return reply_refusal(ctx, REFUSE_HOST);
    }
    if (claimed == NULL) return ValkeyModule_ReplyWithNull(ctx);
    ValkeyModuleCallReply *hset =
        ValkeyModule_Call(ctx, "HSET", "!Esccclcb", row, "state", "active", "attempts", attempts + 1,
                          "lease_epoch", cached_run_id, (size_t)RUN_ID_LEN);
    if (!call_ok(hset)) return reply_refusal(ctx, REFUSE_HOST);
    ValkeyModuleCallReply *zadd = ValkeyModule_Call(ctx, "ZADD", "!Esls", argv[2], deadline, claimed);
    if (!call_ok(zadd)) return reply_refusal(ctx, REFUSE_HOST);

    size_t id_len;
    const char *id = ValkeyModule_StringPtrLen(claimed, &id_len);
    ValkeyModule_ReplyWithArray(ctx, 3);
    ValkeyModule_ReplyWithStringBuffer(ctx, id, id_len);
    ValkeyModule_ReplyWithLongLong(ctx, attempts + 1);
    return ValkeyModule_ReplyWithLongLong(ctx, deadline);
}

/* EMQ.EXTEND <active> <row> <id> <attempt> <lease_ms>
 *
 * Extends one lease when it is live: id in active, and the row a hash whose
 * state is active and whose attempts equals attempt (so a stale worker cannot
 * extend a newer claim of the same job). Live: the lease gets now + lease_ms
 * and the row is re-stamped with this process's run_id, which moves the lease
 * to the process that extended it; reply 1. Otherwise reply 0, no write. */
static int extend_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long attempt, lease, now, deadline;
    int row_type, live = 0;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 6) return ValkeyModule_WrongArity(ctx);
    if (!parse_at_least(argv[4], 0, &attempt)) return ValkeyModule_ReplyWithError(ctx, ERR_ATTEMPT);
    if (!parse_at_least(argv[5], 1, &lease)) return ValkeyModule_ReplyWithError(ctx, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return ValkeyModule_ReplyWithError(ctx, ERR_DEADLINE);
    if ((why = check_zset(ctx, argv[1])) != REFUSE_NONE) return reply_refusal(ctx, why);
    if (!read_type(ctx, argv[2], &row_type)) return reply_refusal(ctx, REFUSE_HOST);
    if (row_type != TYPE_NONE && row_type != TYPE_HASH) return reply_refusal(ctx, REFUSE_WRONGTYPE);
    if (!run_id_cached) return ValkeyModule_ReplyWithError(ctx, ERR_HOST);

    /* Read pass. */
    if (row_type == TYPE_HASH) {
        if ((why = lease_is_live(ctx, argv[1], argv[2], argv[3], attempt, &live)) != REFUSE_NONE) {
            return reply_refusal(ctx, why);
        }
    }
    if (!live) return ValkeyModule_ReplyWithLongLong(ctx, 0);

    /* Write pass. */
    ValkeyModuleCallReply *zadd = ValkeyModule_Call(ctx, "ZADD", "!Esls", argv[1], deadline, argv[3]);
    if (!call_ok(zadd)) return reply_refusal(ctx, REFUSE_HOST);
    ValkeyModuleCallReply *hset =
        ValkeyModule_Call(ctx, "HSET", "!Escb", argv[2], "lease_epoch", cached_run_id, (size_t)RUN_ID_LEN);
    if (!call_ok(hset)) return reply_refusal(ctx, REFUSE_HOST);
    return ValkeyModule_ReplyWithLongLong(ctx, 1);
}

/* EMQ.EXTENDS <active> <lease_ms> <id> <row> <attempt> [<id> <row> <attempt> ...]
 *
 * EMQ.EXTEND for many leases in one call: every triple is tested in the read
 * pass (its row checked for the caller's write permission first, since rows
 * here are arguments, not declared keys), then every live lease gets the
 * same deadline from one now, and the stamp. Replies the ids extended, in
 * argument order (a live triple given twice is extended and listed twice).
 * A row of the wrong type refuses the whole call; a missing row is not live. */
static int extends_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long lease, now, deadline;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc < 6 || (argc - 3) % 3 != 0) return ValkeyModule_WrongArity(ctx);
    if (!parse_at_least(argv[2], 1, &lease)) return ValkeyModule_ReplyWithError(ctx, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return ValkeyModule_ReplyWithError(ctx, ERR_DEADLINE);
    size_t count = (size_t)(argc - 3) / 3;
    long long *attempts = ValkeyModule_PoolAlloc(ctx, count * sizeof *attempts);
    for (size_t i = 0; i < count; i++) {
        if (!parse_at_least(argv[5 + 3 * i], 0, &attempts[i])) {
            return ValkeyModule_ReplyWithError(ctx, ERR_ATTEMPT);
        }
    }
    if ((why = check_zset(ctx, argv[1])) != REFUSE_NONE) return reply_refusal(ctx, why);
    if (!run_id_cached) return ValkeyModule_ReplyWithError(ctx, ERR_HOST);

    /* Read pass. */
    int *live = ValkeyModule_PoolAlloc(ctx, count * sizeof *live);
    long live_count = 0;
    for (size_t i = 0; i < count; i++) {
        ValkeyModuleString *id = argv[3 + 3 * i], *row = argv[4 + 3 * i];
        int type;
        live[i] = 0;
        if (!row_permitted(ctx, row)) return reply_refusal(ctx, REFUSE_NOPERM);
        if (!read_type(ctx, row, &type)) return reply_refusal(ctx, REFUSE_HOST);
        if (type == TYPE_NONE) continue;
        if (type != TYPE_HASH) return reply_refusal(ctx, REFUSE_WRONGTYPE);
        if ((why = lease_is_live(ctx, argv[1], row, id, attempts[i], &live[i])) != REFUSE_NONE) {
            return reply_refusal(ctx, why);
        }
        live_count += live[i];
    }

    /* Write pass. */
    for (size_t i = 0; i < count; i++) {
        if (!live[i]) continue;
        ValkeyModuleCallReply *zadd =
            ValkeyModule_Call(ctx, "ZADD", "!Esls", argv[1], deadline, argv[3 + 3 * i]);
        if (!call_ok(zadd)) return reply_refusal(ctx, REFUSE_HOST);
        ValkeyModuleCallReply *hset = ValkeyModule_Call(ctx, "HSET", "!Escb", argv[4 + 3 * i], "lease_epoch",
                                                        cached_run_id, (size_t)RUN_ID_LEN);
        if (!call_ok(hset)) return reply_refusal(ctx, REFUSE_HOST);
    }

    ValkeyModule_ReplyWithArray(ctx, live_count);
    for (size_t i = 0; i < count; i++) {
        if (!live[i]) continue;
        size_t id_len;
        const char *id = ValkeyModule_StringPtrLen(argv[3 + 3 * i], &id_len);
        ValkeyModule_ReplyWithStringBuffer(ctx, id, id_len);
    }
    return VKM_OK;
}

/* One expired member of active, as the sweep's read pass decided it. */
struct swept {
    const char *id;
    size_t id_len;
    ValkeyModuleString *row;
    int verdict;
    long long stalled;
};

/* EMQ.STALLED.CHECK <active> <pending> <dead> <prefix> <max_stalled> [LIMIT <n>]
 *
 * Sweeps at most n (default 1000) members of active whose deadline is <= now,
 * in deadline order, and replies [recovered_ids, dead_ids] in sweep order.
 * Each member is decided by trafikey_decide_member, which asks for one read
 * at a time: no row is a ghost (dropped from active); a lane row (group set)
 * is left alone; a lease stamped by another process, or never stamped,
 * crossed a restart and goes back to pending with stalled untouched (listed
 * as recovered); only a lease stamped by this process counts a stall, and
 * stalled + 1 reaching max_stalled dead-letters the job. A non-hash row or a
 * stalled field that is not an integer refuses the whole sweep unwritten. */
static int stalled_check_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    long long max_stalled, limit = DEFAULT_LIMIT;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 6 && argc != 8) return ValkeyModule_WrongArity(ctx);
    if (!parse_at_least(argv[5], 1, &max_stalled)) return ValkeyModule_ReplyWithError(ctx, ERR_MAX_STALLED);
    if (argc == 8) {
        size_t len;
        const char *option = ValkeyModule_StringPtrLen(argv[6], &len);
        if (!word_is(option, len, "limit")) return ValkeyModule_ReplyWithError(ctx, ERR_SYNTAX);
        if (!parse_at_least(argv[7], 1, &limit)) return ValkeyModule_ReplyWithError(ctx, ERR_LIMIT);
    }
    for (int k = 1; k <= 3; k++) {
        if ((why = check_zset(ctx, argv[k])) != REFUSE_NONE) return reply_refusal(ctx, why);
    }
    if (!run_id_cached) return ValkeyModule_ReplyWithError(ctx, ERR_HOST);
    long long now = ValkeyModule_Milliseconds();

    ValkeyModuleCallReply *expired = ValkeyModule_Call(ctx, "ZRANGE", "Esclcccl", argv[1], "-inf", now,
                                                       "BYSCORE", "LIMIT", "0", limit);
    if (!call_ok(expired) || ValkeyModule_CallReplyType(expired) != VKM_REPLY_ARRAY) {
        return reply_refusal(ctx, REFUSE_HOST);
    }

    /* Read pass: the decision asks, this loop reads, until a verdict. */
    size_t count = ValkeyModule_CallReplyLength(expired);
    struct swept *members = count ? ValkeyModule_PoolAlloc(ctx, count * sizeof *members) : NULL;
    long recovered_count = 0, dead_count = 0;
    for (size_t i = 0; i < count; i++) {
        struct swept *m = &members[i];
        struct trafikey_seen seen;
        struct trafikey_step step;
        int found;

        memset(&seen, 0, sizeof seen);
        m->id = ValkeyModule_CallReplyStringPtr(ValkeyModule_CallReplyArrayElement(expired, i), &m->id_len);
        m->row = row_key(ctx, argv[4], m->id, m->id_len);
        if (!row_permitted(ctx, m->row)) return reply_refusal(ctx, REFUSE_NOPERM);
        for (;;) {
            trafikey_decide_member(cached_run_id, RUN_ID_LEN, max_stalled, &seen, &step);
            if (step.need == NEED_NOTHING) break;
            switch (step.need) {
            case NEED_TYPE:
                if (!read_type(ctx, m->row, &seen.type)) return reply_refusal(ctx, REFUSE_HOST);
                seen.type_read = 1;
                break;
            case NEED_GROUP: {
                ValkeyModuleCallReply *group = ValkeyModule_Call(ctx, "HEXISTS", "Esc", m->row, "group");
                if (!call_ok(group) || ValkeyModule_CallReplyType(group) != VKM_REPLY_INTEGER) {
                    return reply_refusal(ctx, REFUSE_HOST);
                }
                seen.group_present = ValkeyModule_CallReplyInteger(group) != 0;
                seen.group_read = 1;
                break;
            }
            case NEED_EPOCH:
                found = read_field(ctx, m->row, "lease_epoch", &seen.epoch, &seen.epoch_len);
                if (found < 0) return reply_refusal(ctx, REFUSE_HOST);
                if (found == 0) seen.epoch = NULL;
                seen.epoch_read = 1;
                break;
            default:
                found = read_field(ctx, m->row, "stalled", &seen.stalled, &seen.stalled_len);
                if (found < 0) return reply_refusal(ctx, REFUSE_HOST);
                if (found == 0) seen.stalled = NULL;
                seen.stalled_read = 1;
                break;
            }
        }
        if (step.verdict == VERDICT_WRONGTYPE) return reply_refusal(ctx, REFUSE_WRONGTYPE);
        if (step.verdict == VERDICT_NOT_INTEGER) return reply_refusal(ctx, REFUSE_NOT_INTEGER);
        m->verdict = step.verdict;
        m->stalled = step.stalled;
        if (m->verdict == VERDICT_EXEMPT || m->verdict == VERDICT_RECOVERED) recovered_count++;
        if (m->verdict == VERDICT_DEAD) dead_count++;
    }

    /* Write pass, in sweep order. */
    for (size_t i = 0; i < count; i++) {
        struct swept *m = &members[i];
        ValkeyModuleCallReply *r;
        if (m->verdict == VERDICT_LANE) continue;
        r = ValkeyModule_Call(ctx, "ZREM", "!Esb", argv[1], m->id, m->id_len);
        if (!call_ok(r)) return reply_refusal(ctx, REFUSE_HOST);
        if (m->verdict == VERDICT_GHOST) continue;
        if (m->verdict == VERDICT_DEAD) {
            r = ValkeyModule_Call(ctx, "ZADD", "!Eslb", argv[3], now, m->id, m->id_len);
            if (!call_ok(r)) return reply_refusal(ctx, REFUSE_HOST);
            r = ValkeyModule_Call(ctx, "HSET", "!Escccl", m->row, "state", "dead", "stalled", m->stalled);
        } else {
            r = ValkeyModule_Call(ctx, "ZADD", "!Escb", argv[2], "0", m->id, m->id_len);
            if (!call_ok(r)) return reply_refusal(ctx, REFUSE_HOST);
            if (m->verdict == VERDICT_EXEMPT) {
                r = ValkeyModule_Call(ctx, "HSET", "!Escc", m->row, "state", "pending");
            } else {
                r = ValkeyModule_Call(ctx, "HSET", "!Escccl", m->row, "state", "pending", "stalled", m->stalled);
            }
        }
        if (!call_ok(r)) return reply_refusal(ctx, REFUSE_HOST);
    }

    ValkeyModule_ReplyWithArray(ctx, 2);
    ValkeyModule_ReplyWithArray(ctx, recovered_count);
    for (size_t i = 0; i < count; i++) {
        if (members[i].verdict == VERDICT_EXEMPT || members[i].verdict == VERDICT_RECOVERED) {
            ValkeyModule_ReplyWithStringBuffer(ctx, members[i].id, members[i].id_len);
        }
    }
    ValkeyModule_ReplyWithArray(ctx, dead_count);
    for (size_t i = 0; i < count; i++) {
        if (members[i].verdict == VERDICT_DEAD) {
            ValkeyModule_ReplyWithStringBuffer(ctx, members[i].id, members[i].id_len);
        }
    }
    return VKM_OK;
}

/* ------------------------------------------------------------------------ */
/* Load                                                                     */
/* ------------------------------------------------------------------------ */

/* Binds the API, names the module, reads the epoch and registers the verbs.
 * A module that could not read a valid run_id refuses to load, so a server
 * that serves the EMQ verbs always holds an epoch. */
int ValkeyModule_OnLoad(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    static const struct {
        const char *name;
        vkm_CmdFunc fn;
        int firstkey, lastkey, keystep;
    } commands[] = {
        {"EMQ.CLAIM", claim_command, 1, 3, 1},
        {"EMQ.EXTEND", extend_command, 1, 2, 1},
        {"EMQ.EXTENDS", extends_command, 1, 1, 1},
        {"EMQ.STALLED.CHECK", stalled_check_command, 1, 4, 1},
    };

    (void)argv;
    (void)argc;
    const char *missing = bind_api(ctx);
    if (missing != NULL) {
        if (ValkeyModule_Log != NULL) {
            ValkeyModule_Log(ctx, "warning", "trafikey: the server does not provide %s", missing);
        }
        return VKM_ERR;
    }
    if (ValkeyModule_IsModuleNameBusy("trafikey")) {
        ValkeyModule_Log(ctx, "warning", "trafikey: a module named trafikey is already loaded");
        return VKM_ERR;
    }
    ValkeyModule_SetModuleAttribs(ctx, "trafikey", 1, VKM_APIVER_1);

    const char *reason = load_epoch(ctx);
    if (reason != NULL) {
        ValkeyModule_Log(ctx, "warning", "trafikey: emq epoch not loaded: %s", reason);
        return VKM_ERR;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (ValkeyModule_CreateCommand(ctx, commands[i].name, commands[i].fn, "write deny-oom",
                                       commands[i].firstkey, commands[i].lastkey,
                                       commands[i].keystep) != VKM_OK) {
            ValkeyModule_Log(ctx, "warning", "trafikey: could not register %s", commands[i].name);
            return VKM_ERR;
        }
    }
    return VKM_OK;
}
