"""What other queues charge for a restart, in a model: each queue's budget of lost leases, the
healthy jobs a week that restarts alone dead-letter under it, and those numbers as a table's
text and HTML (notebook 05; its figure is `plots.dead_letters`, its widget
`widgets.restart_costs`).
"""

import html
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Budget:
    """One queue's rule, as the model plays it: a job is dead-lettered once the leases it lost
    exceed `forgiven`. `limit` is the setting as the queue's own documentation names it, and
    `forgiven` what that setting forgives, off-by-one included (notebook 05 cites each page).
    `counts_restarts` False: a lease that crossed a restart is not counted at all. `note`, when
    set, says why the row is not the same event as the others."""

    queue: str
    limit: str
    forgiven: int
    counts_restarts: bool
    note: str = ""


Row = dict[str, Any]
"""One queue's line of the table, by column name (restart_dead_letters gives them)."""

BUDGETS = (
    # A job fails once its stall count is greater than maxStalledCount: the second stall.
    Budget("BullMQ", "maxStalledCount 1 (default)", 1, True),
    # A task whose lease expires with all MaxRetry retries used is archived: the 26th.
    Budget("asynq", "MaxRetry 25 (default)", 25, True),
    # A message goes to the dead-letter queue when its receive count would exceed
    # maxReceiveCount; the first receive counts, so the 5th lost lease is the last.
    # SQS has no broker to restart: the row is a consumer outage, which trafikey counts.
    Budget("Amazon SQS", "maxReceiveCount 5 (your choice)", 4, True,
           note="SQS has no broker to restart: its row is a consumer outage. trafikey would count "
                "that outage (a worker gone under a live server), so the SQS row cannot be set "
                "beside trafikey's 0."),
    # stalled + 1 reaching max_stalled is a death: at 1, the first counted stall.
    Budget("trafikey", "max_stalled 1", 0, False),
)

WEEK_MIN = 7 * 24 * 60

NEGLIGIBLE_SHARE = 1e-9
"""Below this share of the week's jobs, the model says "fewer than one job in a billion": its
inputs are guesses, so a figure such as 2.3e-80 would be precision the model does not have."""


def poisson_tail(mean: float, at_least: int) -> float:
    """P(N >= at_least) for N ~ Poisson(mean)."""
    # Summed upward rather than as 1 - P(N < at_least), which rounds to noise for small tails.
    if mean == 0:
        return 1.0 if at_least <= 0 else 0.0
    terms = (math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
             for k in range(max(at_least, 0), max(at_least, 0) + 400))
    return math.fsum(terms)


def restart_dead_letters(jobs_in_flight: int, restarts_per_week: float, job_minutes: float,
                         lease_s: float, down_s: float,
                         budgets: tuple[Budget, ...] = BUDGETS) -> list[Row]:
    """Healthy jobs a week each queue dead-letters because of restarts alone, in a model:
    jobs_in_flight jobs at all times, each running job_minutes; restarts come at random
    (Poisson) restarts_per_week times a week and each lasts down_s seconds. The model assumes
    that a restart shorter than the lease loses no lease (every worker renews its lease as soon
    as the server is back, before the lease runs out), that a longer one costs every job in
    flight one lost lease, and that a lost lease leaves a job's running time unchanged (a job
    retried from the start really stays in flight longer, and meets more restarts). A job is
    dead-lettered when its lost leases exceed what its queue forgives."""
    if jobs_in_flight < 0 or restarts_per_week < 0 or job_minutes <= 0 or lease_s <= 0:
        raise ValueError("jobs_in_flight and restarts_per_week must be 0 or more, job_minutes "
                         "and lease_s more than 0")
    jobs_per_week = jobs_in_flight * WEEK_MIN / job_minutes
    costly = restarts_per_week if down_s > lease_s else 0.0
    mean = costly * job_minutes / WEEK_MIN
    rows = []
    for budget in budgets:
        share = poisson_tail(mean, budget.forgiven + 1) if budget.counts_restarts else 0.0
        rows.append({"queue": budget.queue, "limit": budget.limit, "forgiven": budget.forgiven,
                     "counts_restarts": budget.counts_restarts, "share": share,
                     "dead_per_week": jobs_per_week * share, "note": budget.note})
    return rows


def dead_text(row: Row) -> str:
    """A row's healthy jobs dead-lettered a week, to the precision the model has."""
    if row["dead_per_week"] == 0:
        return "0"
    if row["share"] < NEGLIGIBLE_SHARE:
        return "fewer than one job in a billion"
    return f"{row['dead_per_week']:.2g}"


def forgiven_text(row: Row) -> str:
    if row["counts_restarts"]:
        return str(row["forgiven"])
    return f"{row['forgiven']}, restarts not counted"


def marked(row: Row) -> str:
    """The queue's name, with a * when a note below the table says its row is another event."""
    return f"{row['queue']}*" if row.get("note") else row["queue"]


def footnotes(rows: list[Row]) -> list[str]:
    return [f"* {r['note']}" for r in rows if r.get("note")]


def dead_letter_table(rows: list[Row]) -> str:
    lines = [f"{'queue':<12} {'limit':<32} {'lost leases forgiven':<24} healthy jobs dead a week"]
    lines += [f"{marked(r):<12} {r['limit']:<32} {forgiven_text(r):<24} {dead_text(r)}"
              for r in rows]
    return "\n".join(lines + footnotes(rows))


def table_html(rows: list[Row]) -> str:
    body = "".join(
        f"<tr><td>{html.escape(marked(r))}</td><td>{r['limit']}</td><td>{forgiven_text(r)}</td>"
        f"<td>{dead_text(r)}</td></tr>" for r in rows)
    notes = "".join(f"<p>{html.escape(note)}</p>" for note in footnotes(rows))
    return ("<table><tr><th>queue</th><th>limit</th><th>lost leases forgiven</th>"
            f"<th>healthy jobs dead a week</th></tr>{body}</table>{notes}")
