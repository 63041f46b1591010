"""`./brokerstream reconcile`: proof, on a running stack, that the system of record holds what the flow decided.

Three checks, each printed with what differs:

1. **Outcomes.** Every order on the orders topic has exactly one outcome in the flow (accepted, rejected,
   cancelled, expired, or a dead letter; or it is still working on the book), and every outcome the flow
   wrote is in Postgres `order_results` once, with the same status.
2. **The books in Postgres.** Each Postgres position equals a fold of Postgres's own fills of it, in the
   order of their position versions: quantity, exact cost basis, realized P&L, cash, and a version equal
   to the number of fills (a lost fill shows as a version ahead of the fold). One REPEATABLE READ snapshot
   reads both, after the sync has reached the topics' ends: a result and its position come from two topics
   and can land one sink batch apart, so under load a position may briefly run ahead of its fills.
3. **Dead letters**, counted by topic and cause (dlq.streams and dlq.ticks by their letters' fields,
   dlq.connect by Connect's error headers).

It takes the topics' ends once, reads the topics up to those ends only, and waits (up to `--timeout`) until
the sink's offsets in Postgres (`sink_offsets`) stand after the last record of each partition it read: a sync
that is merely behind is waited for, not reported, and what the flow writes after the cut is neither compared
nor reported missing.
The outcome is also written for Prometheus's node exporter textfile collector
(`<data>/metrics/reconcile.prom`): `brokerstream_reconcile_last_timestamp_seconds`,
`brokerstream_reconcile_last_passed` and `brokerstream_reconcile_differences{check}`.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from confluent_kafka import Consumer, TopicPartition

from brokerstream.clients.kafka_clients import client_conf
from brokerstream.common.baseline_settings import baseline_setting
from brokerstream.common.config import Config
from brokerstream.common.topics import POSITIONS
from brokerstream.ops.books import MICRO, Book
from brokerstream.ops.flowcheck import high_watermarks, read_topic, result_key

SHOWN = 20  # differences printed per check

# The sink-orders connector's topics, whose rows the outcome and books checks read.
SYNCED = ("order-results", POSITIONS, "order-events")
SINK = "sink-orders"


@dataclass
class Report:
    orders: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    working: int = 0
    no_outcome: list[str] = field(default_factory=list)
    decided_twice: list[str] = field(default_factory=list)
    missing_in_postgres: list[str] = field(default_factory=list)
    status_differs: list[str] = field(default_factory=list)
    rows_twice_in_postgres: list[str] = field(default_factory=list)
    positions: int = 0
    fills: int = 0
    unordered_fills: int = 0
    synthetic_positions: int = 0  # of accounts outside the reference data: load written around the flow
    books_differ: list[str] = field(default_factory=list)
    dead_letters: dict[str, collections.Counter] = field(default_factory=dict)
    sync_behind: dict[str, int] = field(default_factory=dict)

    def differences(self) -> dict[str, int]:
        return {
            "no_outcome": len(self.no_outcome),
            "decided_twice": len(self.decided_twice),
            "missing_in_postgres": len(self.missing_in_postgres),
            "status_differs": len(self.status_differs),
            "rows_twice_in_postgres": len(self.rows_twice_in_postgres),
            "books_differ": len(self.books_differ),
            "sync_behind": sum(self.sync_behind.values()),
        }

    @property
    def passed(self) -> bool:
        return not any(self.differences().values())

    def lines(self) -> list[str]:
        out = [
            f"orders {self.orders}: "
            + ", ".join(f"{k.lower()} {v}" for k, v in sorted(self.outcomes.items()))
            + f", working {self.working}",
            f"postgres: {self.positions} positions folded from {self.fills} fills"
            + (
                f" ({self.unordered_fills} fills without a position version, ordered by time)"
                if self.unordered_fills
                else ""
            )
            + (
                f"; {self.synthetic_positions} positions of accounts outside the reference data not checked"
                " (synthetic load written around the flow)"
                if self.synthetic_positions
                else ""
            ),
        ]
        for topic, causes in sorted(self.dead_letters.items()):
            out.append(
                f"dead letters {topic}: {sum(causes.values())} ("
                + ", ".join(f"{c} {n}" for c, n in causes.most_common())
                + ")"
            )
        for name, items in (
            ("orders without an outcome", self.no_outcome),
            ("orders decided twice", self.decided_twice),
            ("outcomes missing in postgres", self.missing_in_postgres),
            ("outcomes whose status differs in postgres", self.status_differs),
            ("outcomes twice in postgres", self.rows_twice_in_postgres),
            ("positions that differ from their fills", self.books_differ),
        ):
            if items:
                out.append(f"DIFFERS: {len(items)} {name}: " + "; ".join(items[:SHOWN]))
        if self.sync_behind:
            out.append(f"DIFFERS: the sync is behind (records unwritten per topic): {self.sync_behind}")
        out.append("reconcile: " + ("passed" if self.passed else "FAILED"))
        return out


def topic_ends(cfg: Config, topics: tuple[str, ...]) -> dict[str, dict[int, int]]:
    """{topic -> {partition -> high watermark}} as they are now."""
    ends = {}
    consumer = Consumer(client_conf(cfg, **{"group.id": f"reconcile-{time.time_ns()}"}))
    try:
        for t in topics:
            parts = list(consumer.list_topics(t, timeout=10).topics[t].partitions)
            ends[t] = high_watermarks(cfg, t, parts)
    finally:
        consumer.close()
    return ends


def after_last_records(messages, lettered: set[tuple[int, int]] = frozenset()) -> dict[int, int]:
    """{partition -> the offset after its last record read}: where a sink that wrote them all stands. A record
    Connect dead-lettered ((partition, offset) in `lettered`) may never reach the sink (a converter's refusal),
    so it does not move the mark."""
    out: dict[int, int] = {}
    for m in messages:
        if (m.partition, m.offset) not in lettered:
            out[m.partition] = max(out.get(m.partition, 0), m.offset + 1)
    return out


def wait_synced(
    cfg: Config,
    connector: str,
    topics: tuple[str, ...],
    timeout: float,
    targets: dict[str, dict[int, int]] | None = None,
) -> dict[str, int]:
    """Waits until the connector's offsets in Postgres reach `targets` (per topic and partition, the offset
    after the last record to hold, exact), or else the topics' ends as they are now; returns what is still
    unwritten per topic when `timeout` passes ({} once synced). Against the ends, one offset of slack per
    partition: a transactional topic's last offset is a commit marker that no record fills (an aborted
    transaction at a partition's end leaves more, which only `targets` can tell)."""
    slack = 0 if targets is not None else 1
    ends = targets if targets is not None else topic_ends(cfg, topics)
    deadline = time.monotonic() + timeout
    while True:
        with psycopg.connect(cfg.postgres_dsn()) as conn:
            stored = {
                (t, p): n
                for t, p, n in conn.execute(
                    "SELECT topic, partition, next_offset FROM sink_offsets WHERE connector = %s", (connector,)
                )
            }
        behind = {}
        for t, parts in ends.items():
            n = sum(max(0, end - stored.get((t, p), 0) - slack) for p, end in parts.items() if end > 0)
            if n:
                behind[t] = n
        if not behind or time.monotonic() > deadline:
            return behind
        time.sleep(0.5)


def dead_letters(cfg: Config, connect: collections.Counter | None = None) -> dict[str, collections.Counter]:
    """{dlq topic -> Counter of 'source topic: cause'}; dlq.connect's counts are `connect` when read already."""
    out: dict[str, collections.Counter] = {}
    for topic in ("dlq.streams", "dlq.ticks"):
        counts: collections.Counter = collections.Counter()
        for m in read_topic(cfg, topic):
            if m.value:
                counts[f"{m.value['source_topic']}: {m.value['error_class'].rsplit('.', 1)[-1]}"] += 1
        out[topic] = counts
    out["dlq.connect"] = connect if connect is not None else connect_letters(cfg)[0]
    return out


def connect_letters(cfg: Config) -> tuple[collections.Counter, dict[str, set[tuple[int, int]]]]:
    """dlq.connect's letters: counted by 'source topic: cause', and {source topic -> {(partition, offset)}}."""
    counts: collections.Counter = collections.Counter()
    where: dict[str, set[tuple[int, int]]] = collections.defaultdict(set)
    topic = "dlq.connect"
    consumer = Consumer(
        client_conf(cfg, **{"group.id": f"reconcile-dlq-{time.time_ns()}", "enable.auto.commit": False})
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or not meta.partitions:
            return counts, where
        ends = high_watermarks(cfg, topic, list(meta.partitions))
        remaining = {p: e for p, e in ends.items() if e > 0}
        consumer.assign([TopicPartition(topic, p, 0) for p in remaining])
        deadline = time.monotonic() + 120
        while remaining and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error():
                    continue
                h = {k: (v or b"").decode(errors="replace") for k, v in (msg.headers() or [])}
                cause = h.get("__connect.errors.exception.class.name", "unknown").rsplit(".", 1)[-1]
                counts[f"{h.get('__connect.errors.topic', '?')}: {cause}"] += 1
                if h.get("__connect.errors.partition", "").isdigit() and h.get("__connect.errors.offset", "").isdigit():
                    where[h["__connect.errors.topic"]].add(
                        (int(h["__connect.errors.partition"]), int(h["__connect.errors.offset"]))
                    )
                if msg.offset() + 1 >= remaining.get(msg.partition(), 0):
                    remaining.pop(msg.partition(), None)
    finally:
        consumer.close()
    return counts, where


_FILLS = """
SELECT r.account_id, r.instrument_id, r.side, r.quantity, r.fill_price, r.position_version,
       coalesce(p.multiplier, 1)
  FROM order_results r LEFT JOIN positions p USING (account_id, instrument_id)
 WHERE r.status = 'ACCEPTED' AND r.account_id IN (SELECT account_id FROM accounts) {elsewhere}
 ORDER BY r.account_id, r.instrument_id, r.position_version NULLS FIRST, r.processed_ts, r.ingest_ts
"""

# Fills the baseline decided on the same stack (a lab run of the other architecture): their results share the
# topic, but the baseline books them in its own tables (mono_positions), not in positions.
_NOT_THE_BASELINES = (
    "AND NOT EXISTS (SELECT 1 FROM {schema}.mono_orders m WHERE m.member_id = r.member_id AND m.order_id = r.order_id)"
)

# Members' books only: the flow refuses an account outside the reference data, so a position of one is
# synthetic load written around the flow (`bench pnl`'s BENCH-* positions, a test's own records), counted apart.
_POSITIONS = """
SELECT account_id, instrument_id, quantity, cost_basis, realized_pnl, cash, version FROM positions
 WHERE account_id IN (SELECT account_id FROM accounts)
"""

_SYNTHETIC = "SELECT count(*) FROM positions WHERE account_id NOT IN (SELECT account_id FROM accounts)"


def check_books(conn, baseline_schema: str = "baseline") -> tuple[int, int, int, list[str]]:
    """Folds Postgres's fills per position and compares the positions table: (positions, fills, fills
    without a version, differences). Fills of a position whose row is missing are a difference too. Fills
    the baseline decided (its ledger, `<baseline_schema>.mono_orders`, where it ran) are not the flow's."""
    books: dict[tuple[str, str], Book] = {}
    unordered = 0
    fills = 0
    if not baseline_schema.isidentifier():
        raise ValueError(f"not a schema name: {baseline_schema!r}")
    ran = conn.execute("SELECT to_regclass(%s)", (f"{baseline_schema}.mono_orders",)).fetchone()[0] is not None
    query = _FILLS.format(elsewhere=_NOT_THE_BASELINES.format(schema=baseline_schema) if ran else "")
    for account, instrument, side, quantity, price, version, multiplier in conn.execute(query):
        fills += 1
        unordered += version is None
        books.setdefault((account, instrument), Book()).fill(side, quantity, price, multiplier)
    differ = []
    rows = 0
    for account, instrument, quantity, cost_basis, realized, cash, version in conn.execute(_POSITIONS):
        rows += 1
        b = books.pop((account, instrument), Book())
        wrong = []
        if version != b.fills:
            wrong.append(f"version {version} but {b.fills} fills")
        if quantity != b.quantity:
            wrong.append(f"quantity {quantity} != {b.quantity}")
        if cost_basis is not None and cost_basis != b.cost.quantize(MICRO):  # never negative, a short's too
            wrong.append(f"cost basis {cost_basis} != {b.cost}")
        if realized != b.realized.quantize(MICRO):
            wrong.append(f"realized {realized} != {b.realized}")
        if cash is not None and cash != b.cash.quantize(MICRO):
            wrong.append(f"cash {cash} != {b.cash}")
        if wrong:
            differ.append(f"{account}|{instrument}: " + ", ".join(wrong))
    for (account, instrument), b in books.items():
        differ.append(f"{account}|{instrument}: {b.fills} fills but no position row")
    return rows, fills, unordered, differ


def reconcile_stack(cfg: Config, *, timeout: float = 300.0) -> Report:
    rep = Report()
    # One cut through the topics, each read to its end as taken here: what the flow writes after it is neither
    # compared nor reported missing. An order taken just before the cut may still be undecided, so the proof
    # is meant for a flow that has drained. The sync is waited for up to the last record of each partition
    # below the cut, exactly (a partition's end can be a commit marker or an aborted transaction).
    order_ends = topic_ends(cfg, ("orders",))["orders"]
    ends = topic_ends(cfg, SYNCED)
    orders = read_topic(cfg, "orders", until=order_ends)
    results = read_topic(cfg, "order-results", until=ends["order-results"])
    events = read_topic(cfg, "order-events", until=ends["order-events"])
    connect_counts, by_connect = connect_letters(cfg)
    rep.dead_letters = dead_letters(cfg, connect_counts)
    positions = read_topic(cfg, POSITIONS, decode=False, until=ends[POSITIONS])
    targets = {
        t: after_last_records(msgs, by_connect.get(t, set()))
        for t, msgs in (("order-results", results), ("order-events", events), (POSITIONS, positions))
    }
    rep.sync_behind = wait_synced(cfg, SINK, SYNCED, timeout, targets=targets)
    lettered = {
        (m.value["source_partition"], m.value["source_offset"])
        for m in read_topic(cfg, "dlq.streams")
        if m.value and m.value["source_topic"] == "orders"
    }
    # An order is named by its member and id; a retry (another record of both) is the same order. A record
    # the flow dead-lettered is an order with that outcome, readable or not.
    wanted: set[str] = set()
    letters = 0
    for m in orders:
        if (m.partition, m.offset) in lettered:
            letters += 1
        elif m.value is None:
            rep.no_outcome.append(f"orders/{m.partition}/{m.offset} (unreadable, not dead-lettered)")
        else:
            wanted.add(result_key(m.key or "", m.value["order_id"]))
    rep.orders = (
        len(wanted) + letters + sum(1 for m in orders if m.value is None and (m.partition, m.offset) not in lettered)
    )
    decided: dict[str, dict] = {}
    for m in results:
        r = m.value
        if not r:
            continue
        key = result_key(r["member_id"], r["order_id"])
        if key in decided and decided[key]["ingest_ts"] == r["ingest_ts"]:
            rep.decided_twice.append(key)
        decided[key] = r
        rep.outcomes[r["status"] if r["status"] != "REJECTED" else "REJECTED"] += 1
    rep.outcomes["DEAD_LETTERED"] = letters
    opened = {result_key(m.value["member_id"], m.value["order_id"]) for m in events if m.value}
    for key in wanted:
        if key not in decided:
            if key in opened:
                rep.working += 1
            else:
                rep.no_outcome.append(key)

    with psycopg.connect(cfg.postgres_dsn()) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        in_pg: dict[tuple, list[str]] = collections.defaultdict(list)
        for member, order, ingest, status in conn.execute(
            "SELECT member_id, order_id, ingest_ts, status FROM order_results"
        ):
            in_pg[(member, order, _ms(ingest))].append(status)
        for key, r in decided.items():
            statuses = in_pg.get((r["member_id"], r["order_id"], _ms(r["ingest_ts"])))
            if not statuses:
                rep.missing_in_postgres.append(key)
            elif statuses[0] != r["status"]:
                rep.status_differs.append(f"{key}: {r['status']} in the flow, {statuses[0]} in postgres")
        rep.rows_twice_in_postgres = [f"{k[0]}|{k[1]}" for k, v in in_pg.items() if len(v) > 1]
        rep.positions, rep.fills, rep.unordered_fills, rep.books_differ = check_books(
            conn, baseline_setting(cfg, "db.schema")
        )
        rep.synthetic_positions = conn.execute(_SYNTHETIC).fetchone()[0]
    return rep


def _ms(ts) -> int:
    return int(ts.timestamp() * 1000)


def write_textfile(cfg: Config, rep: Report, path: Path | None = None) -> Path:
    """The outcome in the Prometheus text format, for node_exporter's textfile collector; written to a
    temporary name and renamed, so a scrape never reads half a file."""
    path = path or cfg.data_dir / "metrics" / "reconcile.prom"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# HELP brokerstream_reconcile_last_timestamp_seconds When the last reconcile ended.",
        "# TYPE brokerstream_reconcile_last_timestamp_seconds gauge",
        f"brokerstream_reconcile_last_timestamp_seconds {time.time():.3f}",
        "# HELP brokerstream_reconcile_last_passed 1 when the last reconcile found nothing that differs.",
        "# TYPE brokerstream_reconcile_last_passed gauge",
        f"brokerstream_reconcile_last_passed {int(rep.passed)}",
        "# HELP brokerstream_reconcile_differences What the last reconcile found, by check.",
        "# TYPE brokerstream_reconcile_differences gauge",
    ]
    lines += [f'brokerstream_reconcile_differences{{check="{k}"}} {v}' for k, v in rep.differences().items()]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    return path
