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
 * and one INFO section, INFO trafikey: what this process's verbs did since
 * the module loaded (see "The counters").
 *
 * Layout: the pure functions first (no context; exported so that ctypes can
 * test them outside a server), then helpers that talk to the server, then
 * the command handlers, then OnLoad. Every handler checks in the same order:
 * arity, arguments, declared key types, a read pass that decides everything
 * and may refuse, a write pass that cannot be refused, one reply. So a
 * refusal never leaves a partial write.
 *
 * The data path is the low-level key API: each sorted set is opened once, a
 * row's fields are read in one hash read (the sweep opens a row again to
 * write it, see decide_row), and the writes change the keys in place.
 * That API replicates nothing, notifies nobody and signals no WATCH, so each
 * write does those itself (see "Writing" below): replicas and the AOF
 * receive the HSET/ZADD/ZREM that carry the granting process's run_id and
 * deadline, never the verb, whose replay would stamp the replaying process.
 */
#include <math.h>
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

/* A run_id as Valkey prints it: exactly 40 bytes, each one of 0-9a-f. */
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

#define TRAFIKEY_API(X)          \
    X(Log)                       \
    X(SetModuleAttribs)          \
    X(SetModuleOptions)          \
    X(IsModuleNameBusy)          \
    X(CreateCommand)             \
    X(GetServerInfo)             \
    X(ServerInfoGetFieldC)       \
    X(FreeServerInfo)            \
    X(AutoMemory)                \
    X(PoolAlloc)                 \
    X(Milliseconds)              \
    X(GetContextFlags)           \
    X(CreateString)              \
    X(CreateStringFromLongLong)  \
    X(FreeString)                \
    X(StringPtrLen)              \
    X(StringToLongLong)          \
    X(OpenKey)                   \
    X(CloseKey)                  \
    X(KeyType)                   \
    X(ValueLength)               \
    X(HashGet)                   \
    X(HashSet)                   \
    X(ZsetAdd)                   \
    X(ZsetRem)                   \
    X(ZsetScore)                 \
    X(ZsetFirstInScoreRange)     \
    X(ZsetRangeCurrentElement)   \
    X(ZsetRangeNext)             \
    X(ZsetRangeEndReached)       \
    X(ZsetRangeStop)             \
    X(Replicate)                 \
    X(NotifyKeyspaceEvent)       \
    X(SignalModifiedKey)         \
    X(ReplyWithError)            \
    X(ReplyWithArray)            \
    X(ReplyWithLongLong)         \
    X(ReplyWithString)           \
    X(ReplyWithNull)             \
    X(WrongArity)                \
    X(GetCurrentUserName)        \
    X(GetModuleUserFromUserName) \
    X(ACLCheckKeyPermissions)    \
    X(FreeModuleUser)            \
    X(RegisterInfoFunc)          \
    X(InfoAddSection)            \
    X(InfoAddFieldLongLong)

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
 * INFO) and caches it for the life of the loaded module. The run_id_cached
 * test below cannot fail in this module: OnLoad refuses a second load of a
 * module named trafikey before it reads anything, and MODULE UNLOAD unmaps
 * the library, so a later load starts from fresh statics. It is the dive's
 * OnceLock, kept so that the cache is set once whatever calls this.
 * Returns NULL, or why the epoch was not loaded. */
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

/* The field names and values the verbs read and write, and the cached run_id
 * as the stamp they write: made once at load, outside any command, so a
 * verb allocates no string it does not have to. */
static struct {
    ValkeyModuleString *state, *attempts, *lease_epoch, *stalled, *group;
    ValkeyModuleString *active, *pending, *dead;
    ValkeyModuleString *stamp;
} lit;

static ValkeyModuleString *literal(const char *text)
{
    return ValkeyModule_CreateString(NULL, text, strlen(text));
}

static void make_literals(void)
{
    if (lit.stamp != NULL) return;
    lit.state = literal("state");
    lit.attempts = literal("attempts");
    lit.lease_epoch = literal("lease_epoch");
    lit.stalled = literal("stalled");
    lit.group = literal("group");
    lit.active = literal("active");
    lit.pending = literal("pending");
    lit.dead = literal("dead");
    lit.stamp = ValkeyModule_CreateString(NULL, cached_run_id, RUN_ID_LEN);
}

/* ------------------------------------------------------------------------ */
/* The counters                                                             */
/* ------------------------------------------------------------------------ */

enum verb { VERB_CLAIM = 0, VERB_EXTEND, VERB_EXTENDS, VERB_STALLED_CHECK, VERB_COUNT };

/* What this process's verbs did since the module loaded, for INFO trafikey:
 * the sweeps that ran (a refused sweep is not one), the members they swept
 * by verdict, and each verb's refusals. Counting touches nothing else: no
 * key, no reply, nothing replicated or saved.
 *
 * They live in this process's memory only, so their life is the run_id's: a
 * restart starts them at zero, as it starts a new lease epoch. Read beside
 * INFO server run_id, a rise of swept_exempt right after the run_id changed
 * is the old process's leases coming back uncounted.
 *
 * Refusals are counted per verb, since they mean different things: a
 * refused sweep leaves every expired lease of its queue where it is until
 * the bad row is repaired, a refused claim starves the workers, a refused
 * extension is one worker's mistake. Only the module's own refusals are
 * here: what the server refuses before the verb runs (READONLY on a
 * replica, OOM, the ACL of declared keys) never reaches the module. */
static struct {
    long long sweeps;
    long long swept[VERDICT_DEAD + 1]; /* by verdict; VERDICT_NONE stays 0 */
    long long refusals[VERB_COUNT];
} counters;

/* The INFO field of each counter; the server prefixes each with "trafikey_". */
static const char *const swept_fields[] = {
    [VERDICT_GHOST] = "swept_ghost",
    [VERDICT_LANE] = "swept_lane",
    [VERDICT_EXEMPT] = "swept_exempt",
    [VERDICT_RECOVERED] = "swept_recovered",
    [VERDICT_DEAD] = "swept_dead",
};
static const char *const refusal_fields[] = {
    [VERB_CLAIM] = "claim_refusals",
    [VERB_EXTEND] = "extend_refusals",
    [VERB_EXTENDS] = "extends_refusals",
    [VERB_STALLED_CHECK] = "stalled_check_refusals",
};

/* The module's own INFO section, "# trafikey": what INFO trafikey prints,
 * and part of INFO modules and INFO everything (not of plain INFO, nor of
 * INFO all). In a crash report too: the counters say what the sweeps had
 * been doing. */
static void info_func(ValkeyModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    ValkeyModule_InfoAddSection(ctx, "");
    ValkeyModule_InfoAddFieldLongLong(ctx, "sweeps", counters.sweeps);
    for (int v = VERDICT_GHOST; v <= VERDICT_DEAD; v++) {
        ValkeyModule_InfoAddFieldLongLong(ctx, swept_fields[v], counters.swept[v]);
    }
    for (int verb = 0; verb < VERB_COUNT; verb++) {
        ValkeyModule_InfoAddFieldLongLong(ctx, refusal_fields[verb], counters.refusals[verb]);
    }
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

/* The server's own arity error, which names the verb as it was registered. */
#define ERR_ARITY NULL

/* Why a read pass refused, or REFUSE_NONE. */
enum refusal { REFUSE_NONE = 0, REFUSE_WRONGTYPE, REFUSE_NOPERM, REFUSE_NOT_INTEGER };

/* Replies the refusal of one verb and counts it (see "The counters"). Every
 * error reply of a verb is made here, so a refused command counts once. */
static int refuse(ValkeyModuleCtx *ctx, enum verb verb, const char *error)
{
    counters.refusals[verb]++;
    if (error == ERR_ARITY) return ValkeyModule_WrongArity(ctx);
    return ValkeyModule_ReplyWithError(ctx, error);
}

static int reply_refusal(ValkeyModuleCtx *ctx, enum verb verb, enum refusal why)
{
    switch (why) {
    case REFUSE_WRONGTYPE: return refuse(ctx, verb, ERR_WRONGTYPE);
    case REFUSE_NOPERM: return refuse(ctx, verb, ERR_NOPERM);
    default: return refuse(ctx, verb, ERR_NOT_INTEGER);
    }
}

/* Argument integers follow the server's strict rule (StringToLongLong). */
static int parse_at_least(ValkeyModuleString *arg, long long min, long long *out)
{
    return ValkeyModule_StringToLongLong(arg, out) == VKM_OK && *out >= min;
}

/* A key a verb reads and may write, opened once for the whole command. */
struct key {
    ValkeyModuleString *name;
    ValkeyModuleKey *handle;
};

static int same_bytes(ValkeyModuleString *a, ValkeyModuleString *b)
{
    size_t a_len, b_len;
    const char *a_ptr = ValkeyModule_StringPtrLen(a, &a_len);
    const char *b_ptr = ValkeyModule_StringPtrLen(b, &b_len);
    return a_len == b_len && memcmp(a_ptr, b_ptr, a_len) == 0;
}

/* Opens the declared keys for reading and writing. Opening for writing has
 * no effect by itself: OnLoad sets NO_IMPLICIT_SIGNAL_MODIFIED, so closing a
 * handle does not signal WATCH; only the writes below signal, and only the
 * keys they change. A key named twice (one set passed as pending and as
 * active, say) shares the first handle: a second one would still point at a
 * set that the first emptied, and so deleted. */
static void open_keys(ValkeyModuleCtx *ctx, ValkeyModuleString **names, int count, struct key *keys)
{
    for (int i = 0; i < count; i++) {
        keys[i].name = names[i];
        keys[i].handle = NULL;
        for (int j = 0; j < i && keys[i].handle == NULL; j++) {
            if (same_bytes(names[i], names[j])) keys[i].handle = keys[j].handle;
        }
        if (keys[i].handle == NULL) keys[i].handle = ValkeyModule_OpenKey(ctx, names[i], VKM_READ | VKM_WRITE);
    }
}

/* A key's type as the pure functions number it (TYPE_NONE when missing). */
static int key_type(ValkeyModuleKey *handle)
{
    int type = ValkeyModule_KeyType(handle);
    return type <= TYPE_ZSET ? type : TYPE_OTHER;
}

/* A declared sorted-set key must be a sorted set or missing. */
static enum refusal check_zset(const struct key *key)
{
    int type = key_type(key->handle);
    return (type == TYPE_NONE || type == TYPE_ZSET) ? REFUSE_NONE : REFUSE_WRONGTYPE;
}

/* The row key of a job: prefix followed by the id, binary safe. Joined on the
 * stack when it fits: a sweep makes one per member, and a pool block per few
 * hundred rows would only be copied out of again by CreateString. */
static ValkeyModuleString *row_key(ValkeyModuleCtx *ctx, ValkeyModuleString *prefix, ValkeyModuleString *id)
{
    size_t prefix_len, id_len;
    const char *prefix_ptr = ValkeyModule_StringPtrLen(prefix, &prefix_len);
    const char *id_ptr = ValkeyModule_StringPtrLen(id, &id_len);
    char small[256];
    char *buf = prefix_len + id_len <= sizeof small ? small : ValkeyModule_PoolAlloc(ctx, prefix_len + id_len);

    memcpy(buf, prefix_ptr, prefix_len);
    if (id_len > 0) memcpy(buf + prefix_len, id_ptr, id_len);
    return ValkeyModule_CreateString(ctx, buf, prefix_len + id_len);
}

/* A field read by HashGet as the pure functions take it: NULL when absent.
 * The bytes live until the command returns (AutoMemory). */
static const char *field_bytes(ValkeyModuleString *value, size_t *len)
{
    *len = 0;
    return value == NULL ? NULL : ValkeyModule_StringPtrLen(value, len);
}

/* A row counter field: absent is 0, a present value must pass trafikey_counter. */
static enum refusal counter_field(ValkeyModuleString *value, long long *out)
{
    size_t len;
    const char *ptr = field_bytes(value, &len);

    *out = 0;
    if (ptr != NULL && !trafikey_counter(ptr, len, out)) return REFUSE_NOT_INTEGER;
    return REFUSE_NONE;
}

/* ------------------------------------------------------------------------ */
/* The caller's permissions                                                 */
/* ------------------------------------------------------------------------ */

/* The server checks the ACL of declared keys only; a row the module derives
 * from an id or takes as an argument is checked here, for read and update,
 * before it is read. The user is resolved once per command. Commands from
 * the primary's link and from AOF loading were checked where they first ran
 * and have no user to ask, and an internal client names none: for those,
 * every row is permitted. A user that is gone permits nothing. */
struct caller {
    int checks;
    ValkeyModuleUser *user;
};

static void caller_resolve(ValkeyModuleCtx *ctx, struct caller *caller)
{
    caller->checks = 0;
    caller->user = NULL;
    if (ValkeyModule_GetContextFlags(ctx) & (VKM_CTX_FLAGS_REPLICATED | VKM_CTX_FLAGS_LOADING)) return;
    ValkeyModuleString *name = ValkeyModule_GetCurrentUserName(ctx);
    if (name == NULL) return;
    caller->checks = 1;
    caller->user = ValkeyModule_GetModuleUserFromUserName(name);
}

static int caller_may_write(const struct caller *caller, ValkeyModuleString *row)
{
    if (!caller->checks) return 1;
    return caller->user != NULL &&
           ValkeyModule_ACLCheckKeyPermissions(caller->user, row, VKM_KEY_ACCESS | VKM_KEY_UPDATE) == VKM_OK;
}

/* FreeModuleUser frees the wrapper only; the server keeps the user. */
static void caller_release(struct caller *caller)
{
    if (caller->user != NULL) ValkeyModule_FreeModuleUser(caller->user);
    caller->user = NULL;
}

/* ------------------------------------------------------------------------ */
/* Writing: each effect as the plain command would leave it                 */
/* ------------------------------------------------------------------------ */

/* ZsetRem, ZsetAdd and HashSet change the dataset and nothing else, so each
 * write below does the rest of what the plain command does, and the tests in
 * tests/module/test_module_api_facts.py pin each of these facts:
 * - Replicate sends the plain command with the bytes written here (the
 *   stamp, the deadline computed here) to replicas and the AOF. The server
 *   wraps all the effects one verb replicates in one MULTI/EXEC (inside a
 *   client's MULTI/EXEC, in that one), so a replica applies a verb whole.
 *   ReplicateVerbatim would send the verb, and its replay would stamp the
 *   replaying process and move the deadline.
 * - NotifyKeyspaceEvent sends the plain command's event to subscribers.
 * - SignalModifiedKey aborts the EXEC of every client that WATCHes the key,
 *   and only of those whose key really changed. */

/* ZREM key member [member ...], for members read from the set in this
 * command, so every one is removed. */
static void zrem_effect(ValkeyModuleCtx *ctx, const struct key *key, ValkeyModuleString **members, size_t count)
{
    for (size_t i = 0; i < count; i++) ValkeyModule_ZsetRem(key->handle, members[i], NULL);
    ValkeyModule_Replicate(ctx, "ZREM", "sv", key->name, members, count);
    ValkeyModule_NotifyKeyspaceEvent(ctx, VKM_NOTIFY_ZSET, "zrem", key->name);
    /* ZsetRem deletes the set it empties, as ZREM does; ZREM then sends del. */
    if (ValkeyModule_KeyType(key->handle) == VKM_KEYTYPE_EMPTY) {
        ValkeyModule_NotifyKeyspaceEvent(ctx, VKM_NOTIFY_GENERIC, "del", key->name);
    }
    ValkeyModule_SignalModifiedKey(ctx, key->name);
}

/* ZADD key score member [score member ...], every member with one score.
 * Like ZADD, it replicates, notifies and signals only when the set changed:
 * members already there with that score are left as they are. */
static void zadd_effect(ValkeyModuleCtx *ctx, const struct key *key, long long score, ValkeyModuleString **members,
                        size_t count)
{
    int changed = 0;

    for (size_t i = 0; i < count; i++) {
        int flags = 0;
        ValkeyModule_ZsetAdd(key->handle, (double)score, members[i], &flags);
        changed |= flags & (VKM_ZADD_ADDED | VKM_ZADD_UPDATED);
    }
    if (!changed) return;
    ValkeyModuleString *score_text = ValkeyModule_CreateStringFromLongLong(ctx, score);
    ValkeyModuleString **pairs = ValkeyModule_PoolAlloc(ctx, 2 * count * sizeof *pairs);
    for (size_t i = 0; i < count; i++) {
        pairs[2 * i] = score_text;
        pairs[2 * i + 1] = members[i];
    }
    ValkeyModule_Replicate(ctx, "ZADD", "sv", key->name, pairs, 2 * count);
    ValkeyModule_NotifyKeyspaceEvent(ctx, VKM_NOTIFY_ZSET, "zadd", key->name);
    ValkeyModule_SignalModifiedKey(ctx, key->name);
}

/* HSET row field value [field value ...], given as count alternating names
 * and values. HSET replicates, notifies and signals even when every value
 * was already there, and so does this. */
static void hset_effect(ValkeyModuleCtx *ctx, ValkeyModuleKey *row, ValkeyModuleString *name,
                        ValkeyModuleString **pairs, size_t count)
{
    for (size_t i = 0; i + 1 < count; i += 2) {
        ValkeyModule_HashSet(row, VKM_HASH_NONE, pairs[i], pairs[i + 1], NULL);
    }
    ValkeyModule_Replicate(ctx, "HSET", "sv", name, pairs, count);
    ValkeyModule_NotifyKeyspaceEvent(ctx, VKM_NOTIFY_HASH, "hset", name);
    ValkeyModule_SignalModifiedKey(ctx, name);
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                 */
/* ------------------------------------------------------------------------ */

/* The claim's read pass, over pending from its head. */
struct claim {
    ValkeyModuleString **removals; /* the ghosts, then the claimed id */
    size_t removal_count;
    ValkeyModuleString *id;        /* NULL: nothing to claim */
    ValkeyModuleString *row_name;
    ValkeyModuleKey *row;
    long long attempts;            /* as stored; the claim writes attempts + 1 */
};

/* Walks pending in claim order (lowest score, then lowest id bytewise: the
 * order of the set's own iterator) until a row that is a hash. A missing row
 * is a ghost, kept for removal; a row of another type refuses the claim. */
static enum refusal plan_claim(ValkeyModuleCtx *ctx, const struct key *pending, ValkeyModuleString *prefix,
                               const struct caller *caller, struct claim *claim)
{
    size_t cap = 0;
    enum refusal why = REFUSE_NONE;

    memset(claim, 0, sizeof *claim);
    if (ValkeyModule_ZsetFirstInScoreRange(pending->handle, -HUGE_VAL, HUGE_VAL, 0, 0) != VKM_OK) {
        return REFUSE_NONE;
    }
    while (!ValkeyModule_ZsetRangeEndReached(pending->handle)) {
        ValkeyModuleString *id = ValkeyModule_ZsetRangeCurrentElement(pending->handle, NULL);
        ValkeyModuleString *name = row_key(ctx, prefix, id);
        if (!caller_may_write(caller, name)) {
            why = REFUSE_NOPERM;
            break;
        }
        ValkeyModuleKey *row = ValkeyModule_OpenKey(ctx, name, VKM_READ | VKM_WRITE);
        int type = key_type(row);
        if (type != TYPE_NONE && type != TYPE_HASH) {
            why = REFUSE_WRONGTYPE;
            break;
        }
        if (claim->removal_count == cap) {
            cap = cap ? cap * 2 : 8;
            ValkeyModuleString **grown = ValkeyModule_PoolAlloc(ctx, cap * sizeof *grown);
            if (claim->removal_count > 0) memcpy(grown, claim->removals, claim->removal_count * sizeof *grown);
            claim->removals = grown;
        }
        claim->removals[claim->removal_count++] = id;
        if (type == TYPE_HASH) {
            ValkeyModuleString *attempts = NULL;
            ValkeyModule_HashGet(row, VKM_HASH_NONE, lit.attempts, &attempts, NULL);
            if ((why = counter_field(attempts, &claim->attempts)) == REFUSE_NONE) {
                claim->id = id;
                claim->row_name = name;
                claim->row = row;
            }
            break;
        }
        if (!ValkeyModule_ZsetRangeNext(pending->handle)) break;
    }
    ValkeyModule_ZsetRangeStop(pending->handle);
    return why;
}

/* The model's claim writes: one ZREM for the ghosts and the claimed id, then
 * the row's one HSET (state, attempts and the stamp), then the lease in
 * active. With nothing to claim, only the ghosts go. */
static void claim_writes(ValkeyModuleCtx *ctx, const struct key *keys, struct claim *claim,
                         long long deadline)
{
    if (claim->removal_count > 0) zrem_effect(ctx, &keys[0], claim->removals, claim->removal_count);
    if (claim->id == NULL) return;
    ValkeyModuleString *hset[] = {lit.state,       lit.active,
                                  lit.attempts,    ValkeyModule_CreateStringFromLongLong(ctx, claim->attempts + 1),
                                  lit.lease_epoch, lit.stamp};
    hset_effect(ctx, claim->row, claim->row_name, hset, 6);
    zadd_effect(ctx, &keys[1], deadline, &claim->id, 1);
}

/* [id, attempts, deadline_ms], or nil when nothing was claimed. */
static int reply_claim(ValkeyModuleCtx *ctx, const struct claim *claim, long long deadline)
{
    if (claim->id == NULL) return ValkeyModule_ReplyWithNull(ctx);
    ValkeyModule_ReplyWithArray(ctx, 3);
    ValkeyModule_ReplyWithString(ctx, claim->id);
    ValkeyModule_ReplyWithLongLong(ctx, claim->attempts + 1);
    return ValkeyModule_ReplyWithLongLong(ctx, deadline);
}

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
    long long lease, now, deadline;
    struct key keys[2]; /* pending, active */
    struct caller caller;
    struct claim claim;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 5) return refuse(ctx, VERB_CLAIM, ERR_ARITY);
    if (!parse_at_least(argv[4], 1, &lease)) return refuse(ctx, VERB_CLAIM, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return refuse(ctx, VERB_CLAIM, ERR_DEADLINE);
    open_keys(ctx, &argv[1], 2, keys);
    if ((why = check_zset(&keys[0])) != REFUSE_NONE) return reply_refusal(ctx, VERB_CLAIM, why);
    if ((why = check_zset(&keys[1])) != REFUSE_NONE) return reply_refusal(ctx, VERB_CLAIM, why);
    if (!run_id_cached) return refuse(ctx, VERB_CLAIM, ERR_HOST);

    /* Read pass. */
    caller_resolve(ctx, &caller);
    why = plan_claim(ctx, &keys[0], argv[3], &caller, &claim);
    caller_release(&caller);
    if (why != REFUSE_NONE) return reply_refusal(ctx, VERB_CLAIM, why);

    /* Write pass. */
    claim_writes(ctx, keys, &claim, deadline);
    return reply_claim(ctx, &claim, deadline);
}

/* The liveness test of EXTEND and EXTENDS on a row already known to be a
 * hash: id in active, state exactly "active", attempts equal to attempt.
 * Both fields come from one hash read, but attempts must be an integer only
 * when the rest holds, so a stale worker meets a plain 0, not an error about
 * a row it no longer owns. */
static enum refusal lease_is_live(const struct key *active, ValkeyModuleKey *row, ValkeyModuleString *id,
                                  long long attempt, int *live)
{
    ValkeyModuleString *state = NULL, *attempts_field = NULL;
    size_t state_len;
    long long attempts;
    double score;

    *live = 0;
    if (ValkeyModule_ZsetScore(active->handle, id, &score) != VKM_OK) return REFUSE_NONE;
    ValkeyModule_HashGet(row, VKM_HASH_NONE, lit.state, &state, lit.attempts, &attempts_field, NULL);
    const char *state_ptr = field_bytes(state, &state_len);
    if (state_ptr == NULL || state_len != 6 || memcmp(state_ptr, "active", 6) != 0) return REFUSE_NONE;
    enum refusal why = counter_field(attempts_field, &attempts);
    if (why != REFUSE_NONE) return why;
    *live = attempts == attempt;
    return REFUSE_NONE;
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
    struct key keys[2]; /* active, row */
    int row_type, live = 0;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc != 6) return refuse(ctx, VERB_EXTEND, ERR_ARITY);
    if (!parse_at_least(argv[4], 0, &attempt)) return refuse(ctx, VERB_EXTEND, ERR_ATTEMPT);
    if (!parse_at_least(argv[5], 1, &lease)) return refuse(ctx, VERB_EXTEND, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return refuse(ctx, VERB_EXTEND, ERR_DEADLINE);
    open_keys(ctx, &argv[1], 2, keys);
    if ((why = check_zset(&keys[0])) != REFUSE_NONE) return reply_refusal(ctx, VERB_EXTEND, why);
    row_type = key_type(keys[1].handle);
    if (row_type != TYPE_NONE && row_type != TYPE_HASH) return reply_refusal(ctx, VERB_EXTEND, REFUSE_WRONGTYPE);
    if (!run_id_cached) return refuse(ctx, VERB_EXTEND, ERR_HOST);

    /* Read pass. */
    if (row_type == TYPE_HASH) {
        if ((why = lease_is_live(&keys[0], keys[1].handle, argv[3], attempt, &live)) != REFUSE_NONE) {
            return reply_refusal(ctx, VERB_EXTEND, why);
        }
    }
    if (!live) return ValkeyModule_ReplyWithLongLong(ctx, 0);

    /* Write pass. */
    zadd_effect(ctx, &keys[0], deadline, &argv[3], 1);
    ValkeyModuleString *hset[] = {lit.lease_epoch, lit.stamp};
    hset_effect(ctx, keys[1].handle, keys[1].name, hset, 2);
    return ValkeyModule_ReplyWithLongLong(ctx, 1);
}

/* One triple of EXTENDS, as its read pass found it. */
struct extension {
    ValkeyModuleKey *row;
    long long attempt;
    int live;
};

/* EXTENDS' read pass: each triple's row is checked for the caller's
 * permission before it is read, then opened and tested. */
static enum refusal plan_extends(ValkeyModuleCtx *ctx, const struct key *active, ValkeyModuleString **triples,
                                 size_t count, const struct caller *caller, struct extension *ext,
                                 long *live_count)
{
    enum refusal why;

    *live_count = 0;
    for (size_t i = 0; i < count; i++) {
        ValkeyModuleString *id = triples[3 * i], *row = triples[3 * i + 1];
        if (!caller_may_write(caller, row)) return REFUSE_NOPERM;
        ext[i].row = ValkeyModule_OpenKey(ctx, row, VKM_READ | VKM_WRITE);
        int type = key_type(ext[i].row);
        if (type == TYPE_NONE) continue;
        if (type != TYPE_HASH) return REFUSE_WRONGTYPE;
        if ((why = lease_is_live(active, ext[i].row, id, ext[i].attempt, &ext[i].live)) != REFUSE_NONE) {
            return why;
        }
        *live_count += ext[i].live;
    }
    return REFUSE_NONE;
}

/* The model's extends writes: one ZADD of every live lease, all with one
 * deadline, then each live row's stamp, in argument order. */
static void extends_writes(ValkeyModuleCtx *ctx, const struct key *active, long long deadline,
                           ValkeyModuleString **triples, const struct extension *ext, size_t count)
{
    ValkeyModuleString **ids = ValkeyModule_PoolAlloc(ctx, count * sizeof *ids);
    size_t id_count = 0;

    for (size_t i = 0; i < count; i++) {
        if (ext[i].live) ids[id_count++] = triples[3 * i];
    }
    if (id_count > 0) zadd_effect(ctx, active, deadline, ids, id_count);
    for (size_t i = 0; i < count; i++) {
        if (!ext[i].live) continue;
        ValkeyModuleString *hset[] = {lit.lease_epoch, lit.stamp};
        hset_effect(ctx, ext[i].row, triples[3 * i + 1], hset, 2);
    }
}

/* The ids extended, in argument order. */
static int reply_extends(ValkeyModuleCtx *ctx, ValkeyModuleString **triples, const struct extension *ext,
                         size_t count, long live_count)
{
    ValkeyModule_ReplyWithArray(ctx, live_count);
    for (size_t i = 0; i < count; i++) {
        if (ext[i].live) ValkeyModule_ReplyWithString(ctx, triples[3 * i]);
    }
    return VKM_OK;
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
    struct key active;
    struct caller caller;
    long live_count;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    if (argc < 6 || (argc - 3) % 3 != 0) return refuse(ctx, VERB_EXTENDS, ERR_ARITY);
    if (!parse_at_least(argv[2], 1, &lease)) return refuse(ctx, VERB_EXTENDS, ERR_LEASE);
    now = ValkeyModule_Milliseconds();
    if (!deadline_in_range(now, lease, &deadline)) return refuse(ctx, VERB_EXTENDS, ERR_DEADLINE);
    size_t count = (size_t)(argc - 3) / 3;
    ValkeyModuleString **triples = &argv[3];
    struct extension *ext = ValkeyModule_PoolAlloc(ctx, count * sizeof *ext);
    for (size_t i = 0; i < count; i++) {
        ext[i].row = NULL;
        ext[i].live = 0;
        if (!parse_at_least(triples[3 * i + 2], 0, &ext[i].attempt)) {
            return refuse(ctx, VERB_EXTENDS, ERR_ATTEMPT);
        }
    }
    open_keys(ctx, &argv[1], 1, &active);
    if ((why = check_zset(&active)) != REFUSE_NONE) return reply_refusal(ctx, VERB_EXTENDS, why);
    if (!run_id_cached) return refuse(ctx, VERB_EXTENDS, ERR_HOST);

    /* Read pass. */
    caller_resolve(ctx, &caller);
    why = plan_extends(ctx, &active, triples, count, &caller, ext, &live_count);
    caller_release(&caller);
    if (why != REFUSE_NONE) return reply_refusal(ctx, VERB_EXTENDS, why);

    /* Write pass. */
    extends_writes(ctx, &active, deadline, triples, ext, count);
    return reply_extends(ctx, triples, ext, count, live_count);
}

/* One expired member of active, as the sweep's read pass decided it. */
struct swept {
    ValkeyModuleString *id;
    ValkeyModuleKey *row; /* its row's handle, open only inside decide_row */
    int verdict;
    long long stalled;
};

/* One sweep: its keys, its arguments, its one now, and what it decided. */
struct sweep {
    struct key keys[3]; /* active, pending, dead */
    ValkeyModuleString *prefix;
    long long max_stalled, limit, now;
    struct swept *members;
    size_t count;
    long recovered_count, dead_count;
};

/* The model's decide_row: the verdict on one member's row, named row_name.
 * group, lease_epoch and stalled come from one hash read; the decision
 * still asks for them one at a time and is shown only what it asked for, so
 * a lane's or an exempt row's stalled never reaches it.
 * The fields and the row's handle are freed here, newest first, rather than
 * at the end of the command. AutoMemory looks a freed object up from both
 * ends of its list, so a free in the middle of a list of thousands costs
 * thousands of steps, and the newest costs one; and a sweep of thousands of
 * members then reuses a few warm allocations instead of holding a handle
 * and a name per member until the command ends. The price is a second
 * lookup: the write pass opens the row again. */
static enum refusal decide_row(ValkeyModuleCtx *ctx, const struct sweep *sweep, struct swept *member,
                               ValkeyModuleString *row_name)
{
    ValkeyModuleString *group = NULL, *epoch = NULL, *stalled = NULL;
    struct trafikey_seen seen;
    struct trafikey_step step;

    member->row = ValkeyModule_OpenKey(ctx, row_name, VKM_READ | VKM_WRITE);
    int type = key_type(member->row);
    if (type == TYPE_HASH) {
        ValkeyModule_HashGet(member->row, VKM_HASH_NONE, lit.group, &group, lit.lease_epoch, &epoch, lit.stalled,
                             &stalled, NULL);
    }
    memset(&seen, 0, sizeof seen);
    for (;;) {
        trafikey_decide_member(cached_run_id, RUN_ID_LEN, sweep->max_stalled, &seen, &step);
        if (step.need == NEED_NOTHING) break;
        switch (step.need) {
        case NEED_TYPE:
            seen.type = type;
            seen.type_read = 1;
            break;
        case NEED_GROUP:
            seen.group_present = group != NULL;
            seen.group_read = 1;
            break;
        case NEED_EPOCH:
            seen.epoch = field_bytes(epoch, &seen.epoch_len);
            seen.epoch_read = 1;
            break;
        default:
            seen.stalled = field_bytes(stalled, &seen.stalled_len);
            seen.stalled_read = 1;
            break;
        }
    }
    if (stalled != NULL) ValkeyModule_FreeString(ctx, stalled);
    if (epoch != NULL) ValkeyModule_FreeString(ctx, epoch);
    if (group != NULL) ValkeyModule_FreeString(ctx, group);
    ValkeyModule_CloseKey(member->row);
    member->row = NULL;
    if (step.verdict == VERDICT_WRONGTYPE) return REFUSE_WRONGTYPE;
    if (step.verdict == VERDICT_NOT_INTEGER) return REFUSE_NOT_INTEGER;
    member->verdict = step.verdict;
    member->stalled = step.stalled;
    return REFUSE_NONE;
}

/* The model's plan_sweep, the read pass: the members ZRANGE <active> -inf
 * <now> BYSCORE LIMIT 0 <limit> lists (earliest deadline first, then id
 * bytewise), each with its verdict. Each row is checked for the caller's
 * permission before it is read. Stops at the first refusal, before any
 * write. */
static enum refusal plan_sweep(ValkeyModuleCtx *ctx, struct sweep *sweep, const struct caller *caller)
{
    ValkeyModuleKey *active = sweep->keys[0].handle;
    /* No more members than the set holds or the limit allows: one allocation. */
    size_t cap = ValkeyModule_ValueLength(active);
    enum refusal why = REFUSE_NONE;

    if ((long long)cap > sweep->limit) cap = (size_t)sweep->limit;
    sweep->members = NULL;
    sweep->count = 0;
    sweep->recovered_count = sweep->dead_count = 0;
    if (cap == 0 || ValkeyModule_ZsetFirstInScoreRange(active, -HUGE_VAL, (double)sweep->now, 0, 0) != VKM_OK) {
        return REFUSE_NONE;
    }
    sweep->members = ValkeyModule_PoolAlloc(ctx, cap * sizeof *sweep->members);
    while (!ValkeyModule_ZsetRangeEndReached(active) && sweep->count < cap) {
        struct swept *member = &sweep->members[sweep->count++];
        member->id = ValkeyModule_ZsetRangeCurrentElement(active, NULL);
        ValkeyModuleString *row_name = row_key(ctx, sweep->prefix, member->id);
        if (!caller_may_write(caller, row_name)) {
            why = REFUSE_NOPERM;
            break;
        }
        why = decide_row(ctx, sweep, member, row_name);
        ValkeyModule_FreeString(ctx, row_name);
        if (why != REFUSE_NONE) break;
        if (member->verdict == VERDICT_EXEMPT || member->verdict == VERDICT_RECOVERED) sweep->recovered_count++;
        if (member->verdict == VERDICT_DEAD) sweep->dead_count++;
        if (!ValkeyModule_ZsetRangeNext(active)) break;
    }
    ValkeyModule_ZsetRangeStop(active);
    return why;
}

/* The model's sweep_writes, for the whole sweep: the writes the verdicts
 * imply, gathered by key. One ZREM takes every member but the lane rows out
 * of active, one ZADD puts the exempt and recovered in pending (score 0) and
 * one the dead in dead (score now), then each row gets its HSET, in sweep
 * order. The dataset ends as the model's member-by-member writes leave it
 * (the members are distinct, so no write undoes another), with one effect
 * to replicate, notify and signal per set instead of one per member. */
static void sweep_writes(ValkeyModuleCtx *ctx, const struct sweep *sweep)
{
    ValkeyModuleString **removed = ValkeyModule_PoolAlloc(ctx, (sweep->count + 1) * sizeof *removed);
    ValkeyModuleString **recovered = ValkeyModule_PoolAlloc(ctx, (sweep->count + 1) * sizeof *recovered);
    ValkeyModuleString **dead = ValkeyModule_PoolAlloc(ctx, (sweep->count + 1) * sizeof *dead);
    size_t removed_count = 0, recovered_count = 0, dead_count = 0;

    for (size_t i = 0; i < sweep->count; i++) {
        const struct swept *member = &sweep->members[i];
        if (member->verdict == VERDICT_LANE) continue;
        removed[removed_count++] = member->id;
        if (member->verdict == VERDICT_DEAD) dead[dead_count++] = member->id;
        if (member->verdict == VERDICT_EXEMPT || member->verdict == VERDICT_RECOVERED) {
            recovered[recovered_count++] = member->id;
        }
    }
    if (removed_count > 0) zrem_effect(ctx, &sweep->keys[0], removed, removed_count);
    if (recovered_count > 0) zadd_effect(ctx, &sweep->keys[1], 0, recovered, recovered_count);
    if (dead_count > 0) zadd_effect(ctx, &sweep->keys[2], sweep->now, dead, dead_count);

    for (size_t i = 0; i < sweep->count; i++) {
        const struct swept *member = &sweep->members[i];
        if (member->verdict == VERDICT_GHOST || member->verdict == VERDICT_LANE) continue; /* no row to write */
        /* Opened, written and freed newest first, as in decide_row. */
        ValkeyModuleString *row_name = row_key(ctx, sweep->prefix, member->id);
        ValkeyModuleKey *row = ValkeyModule_OpenKey(ctx, row_name, VKM_READ | VKM_WRITE);
        if (member->verdict == VERDICT_EXEMPT) {
            /* Back to pending with stalled untouched: the restart is not counted. */
            ValkeyModuleString *hset[] = {lit.state, lit.pending};
            hset_effect(ctx, row, row_name, hset, 2);
        } else {
            /* Replicate holds its own reference to each value, so the count can go
             * now (pinned in tests/module/test_module_api_facts.py). */
            ValkeyModuleString *stalled = ValkeyModule_CreateStringFromLongLong(ctx, member->stalled);
            ValkeyModuleString *hset[] = {lit.state, member->verdict == VERDICT_DEAD ? lit.dead : lit.pending,
                                          lit.stalled, stalled};
            hset_effect(ctx, row, row_name, hset, 4);
            ValkeyModule_FreeString(ctx, stalled);
        }
        ValkeyModule_CloseKey(row);
        ValkeyModule_FreeString(ctx, row_name);
    }
}

/* A sweep that ran, and each of its members by verdict, in the counters. */
static void count_sweep(const struct sweep *sweep)
{
    counters.sweeps++;
    for (size_t i = 0; i < sweep->count; i++) counters.swept[sweep->members[i].verdict]++;
}

/* [recovered_ids, dead_ids], each in sweep order; exempt ids are recovered. */
static int reply_sweep(ValkeyModuleCtx *ctx, const struct sweep *sweep)
{
    ValkeyModule_ReplyWithArray(ctx, 2);
    ValkeyModule_ReplyWithArray(ctx, sweep->recovered_count);
    for (size_t i = 0; i < sweep->count; i++) {
        int verdict = sweep->members[i].verdict;
        if (verdict == VERDICT_EXEMPT || verdict == VERDICT_RECOVERED) {
            ValkeyModule_ReplyWithString(ctx, sweep->members[i].id);
        }
    }
    ValkeyModule_ReplyWithArray(ctx, sweep->dead_count);
    for (size_t i = 0; i < sweep->count; i++) {
        if (sweep->members[i].verdict == VERDICT_DEAD) ValkeyModule_ReplyWithString(ctx, sweep->members[i].id);
    }
    return VKM_OK;
}

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
 * stalled field that is not an integer refuses the whole sweep unwritten.
 * The parts are named after the model's: plan_sweep and decide_row read and
 * decide, sweep_writes writes, reply_sweep replies. */
static int stalled_check_command(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
    struct sweep sweep;
    struct caller caller;
    enum refusal why;

    ValkeyModule_AutoMemory(ctx);
    sweep.limit = DEFAULT_LIMIT;
    if (argc != 6 && argc != 8) return refuse(ctx, VERB_STALLED_CHECK, ERR_ARITY);
    if (!parse_at_least(argv[5], 1, &sweep.max_stalled)) return refuse(ctx, VERB_STALLED_CHECK, ERR_MAX_STALLED);
    if (argc == 8) {
        size_t len;
        const char *option = ValkeyModule_StringPtrLen(argv[6], &len);
        if (!word_is(option, len, "limit")) return refuse(ctx, VERB_STALLED_CHECK, ERR_SYNTAX);
        if (!parse_at_least(argv[7], 1, &sweep.limit)) return refuse(ctx, VERB_STALLED_CHECK, ERR_LIMIT);
    }
    open_keys(ctx, &argv[1], 3, sweep.keys);
    for (int k = 1; k <= 3; k++) {
        if ((why = check_zset(&sweep.keys[k - 1])) != REFUSE_NONE) return reply_refusal(ctx, VERB_STALLED_CHECK, why);
    }
    if (!run_id_cached) return refuse(ctx, VERB_STALLED_CHECK, ERR_HOST);
    sweep.prefix = argv[4];
    sweep.now = ValkeyModule_Milliseconds();

    /* Read pass: the expired members, as ZRANGE <active> -inf <now> BYSCORE
     * LIMIT 0 <n> would list them, each decided. */
    caller_resolve(ctx, &caller);
    why = plan_sweep(ctx, &sweep, &caller);
    caller_release(&caller);
    if (why != REFUSE_NONE) return reply_refusal(ctx, VERB_STALLED_CHECK, why);

    /* Write pass. */
    sweep_writes(ctx, &sweep);
    count_sweep(&sweep);
    return reply_sweep(ctx, &sweep);
}

/* ------------------------------------------------------------------------ */
/* Load                                                                     */
/* ------------------------------------------------------------------------ */

/* Binds the API, names the module, reads the epoch, registers the verbs and
 * the INFO section of their counters.
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
    /* The verbs signal WATCH for the keys they change, not for every key they
     * open for writing (see open_keys). */
    ValkeyModule_SetModuleOptions(ctx, VKM_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);

    const char *reason = load_epoch(ctx);
    if (reason != NULL) {
        ValkeyModule_Log(ctx, "warning", "trafikey: emq epoch not loaded: %s", reason);
        return VKM_ERR;
    }
    make_literals();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (ValkeyModule_CreateCommand(ctx, commands[i].name, commands[i].fn, "write deny-oom",
                                       commands[i].firstkey, commands[i].lastkey,
                                       commands[i].keystep) != VKM_OK) {
            ValkeyModule_Log(ctx, "warning", "trafikey: could not register %s", commands[i].name);
            return VKM_ERR;
        }
    }
    if (ValkeyModule_RegisterInfoFunc(ctx, info_func) != VKM_OK) {
        ValkeyModule_Log(ctx, "warning", "trafikey: could not register its INFO section");
        return VKM_ERR;
    }
    return VKM_OK;
}
