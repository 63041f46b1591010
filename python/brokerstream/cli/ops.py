"""Operators' commands over a running stack: members' API keys, statements, order histories, stream SQL,
reconciliation."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

from brokerstream.common.errors import UserError


def cmd_keys(cfg, args) -> int:
    from brokerstream.ops import keys

    if args.action == "issue":
        issued = keys.issue(cfg, args.member, args.label or "issued")
    elif args.action == "rotate":
        issued, revoked = keys.rotate(cfg, args.member, args.label or "rotated")
        print(f"revoked: {', '.join(revoked) or 'none'}")
    elif args.action == "revoke":
        revoked = keys.revoke(cfg, args.member, args.key_id)
        print(f"revoked: {', '.join(revoked) or 'none (no active key)'}")
        return 0
    else:
        for key_id, label, status, created, revoked_at in keys.listing(cfg, args.member):
            print(
                f"{key_id:<16} {status:<8} created {created:%Y-%m-%d %H:%M:%S}"
                + (f", revoked {revoked_at:%Y-%m-%d %H:%M:%S}" if revoked_at else "")
                + f"  {label}"
            )
        return 0
    print(f"member {issued.member_id}, key id {issued.key_id}")
    print(f"key (shown once, keep it safe): {issued.key}")
    return 0


def cmd_statement(cfg, args) -> int:
    from brokerstream.ops import statement as st

    end = st.parse_time(args.to) if args.to else dt.datetime.now(dt.timezone.utc)
    start = st.parse_time(args.since) if args.since else end - dt.timedelta(days=1)
    try:
        s = st.statement(cfg, args.account, start, end)
    except (st.UnknownAccount, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = s.to_csv() if args.format == "csv" else s.to_json()
    if args.out:
        Path(args.out).write_text(text)
        print(f"{len(s.lines)} lines for account {s.account_id} -> {args.out}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_history(cfg, args) -> int:
    from brokerstream.ops import statement as st

    steps = st.history(cfg, args.member, args.order)
    if not steps:
        print(f"error: no order {args.order} of member {args.member} in Postgres (yet)", file=sys.stderr)
        return 2
    print(json.dumps({"member_id": args.member, "order_id": args.order, "steps": steps}, indent=2))
    return 0


def cmd_sql(cfg, args) -> int:
    from brokerstream.ops import streamsql

    if args.action == "client":
        return streamsql.client(cfg)
    if args.action == "list":
        for query in streamsql.parse_catalog(streamsql.FLINK_CATALOG):
            print(f"{query.name:<32} {query.purpose}")
        return 0
    if not args.name:
        raise UserError("sql run needs a query name: ./brokerstream sql list shows them")
    result = streamsql.run(cfg, args.name, since_ms=streamsql.parse_since(args.since), timeout=args.timeout)
    print(streamsql.format_rows(result, as_json=args.json))
    return 0


def cmd_prices(cfg, args) -> int:
    from brokerstream.ops import controls

    if args.action == "status":
        rows = controls.status_history(cfg, args.instrument)
        if not rows:
            print(f"{args.instrument}: trading (no halt recorded)")
            return 0
        for ts, state, reason, by, ref, held, detail in rows:
            print(
                f"{ts:%Y-%m-%d %H:%M:%S} {state:<8} {reason or '':<10} by {by:<12} reference {ref} held {held}"
                + (f"  {detail}" if detail else "")
            )
        return 0
    controls.send_control(cfg, args.instrument, args.action, args.operator, args.reason)
    print(f"{args.action} of {args.instrument} sent by {args.operator}; `prices status {args.instrument}` shows it")
    return 0


def cmd_members(cfg, args) -> int:
    from brokerstream.ops import controls

    if args.action == "state":
        if not args.value:
            raise UserError("members state M000001 ACTIVE|REDUCING|HALTED [--reason ...]")
        before = controls.set_member_state(cfg, args.member, args.value, args.operator, args.reason)
        print(f"member {args.member}: {before} -> {args.value.upper()} (by {args.operator})")
        return 0
    limits = controls.set_member_limits(
        cfg,
        args.member,
        max_quantity=args.max_quantity,
        max_notional=args.max_notional,
        orders_per_second=args.orders_per_second,
        clear=args.clear,
    )
    print(json.dumps({"member_id": args.member, **{k: str(v) if v is not None else None for k, v in limits.items()}}))
    return 0


def cmd_reconcile(cfg, args) -> int:
    from brokerstream.ops import reconcile

    rep = reconcile.reconcile_stack(cfg, timeout=args.timeout)
    for line in rep.lines():
        print(line)
    path = reconcile.write_textfile(cfg, rep)
    print(f"(outcome for Prometheus in {path})")
    return 0 if rep.passed else 1


def add_commands(sub) -> None:
    s = sub.add_parser(
        "reconcile",
        help="prove the system of record: every order has one outcome in the flow and in Postgres, Postgres "
        "positions equal a fold of its fills, dead letters by topic and cause; exits 1 on a difference",
    )
    s.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the sync to reach the topics' ends"
    )
    s.set_defaults(func=cmd_reconcile)

    s = sub.add_parser(
        "prices",
        help="an equity's trading: halt or resume it (recorded), or show its recorded halts and resumptions",
    )
    s.add_argument("action", choices=["halt", "resume", "status"])
    s.add_argument("instrument", help="the equity id, e.g. EQ000007 (its options halt with it)")
    s.add_argument("--reason", help="halt/resume: why (kept with the change)")
    s.add_argument("--operator", default="operator", help="halt/resume: who (an id; default operator)")
    s.set_defaults(func=cmd_prices)

    s = sub.add_parser(
        "members",
        help="a member's pre-trade controls: its trading state (ACTIVE, REDUCING, HALTED; recorded) or its limits",
    )
    s.add_argument("action", choices=["state", "limits"])
    s.add_argument("member", help="the member id, e.g. M000001")
    s.add_argument("value", nargs="?", help="state: ACTIVE, REDUCING or HALTED")
    s.add_argument("--reason", help="state: why (kept in member_state_changes)")
    s.add_argument("--operator", default="operator", help="state: who (an id; default operator)")
    s.add_argument("--max-quantity", type=int, help="limits: the most units per order")
    s.add_argument("--max-notional", help="limits: the most one order may be worth (a decimal)")
    s.add_argument("--orders-per-second", type=int, help="limits: orders, cancels and amends a second")
    s.add_argument("--clear", action="store_true", help="limits: back to the broker's defaults first")
    s.set_defaults(func=cmd_members)

    s = sub.add_parser("keys", help="members' API keys: issue, rotate, revoke, list (stored as hashes)")
    s.add_argument("action", choices=["issue", "rotate", "revoke", "list"])
    s.add_argument("member", help="the member id, e.g. M000001")
    s.add_argument("--label", help="issue/rotate: who or what holds the key")
    s.add_argument("--key-id", help="revoke: only this key (k_...), not all of the member's")
    s.set_defaults(func=cmd_keys)

    s = sub.add_parser(
        "statement",
        help="an account's statement from Postgres: order events, fills, cash "
        "movements, realized P&L over a time range, as JSON or CSV",
    )
    s.add_argument("account", help="the account id, e.g. A0000001")
    s.add_argument(
        "--from", dest="since", help="start, ISO 8601 (UTC unless it says), inclusive; default a day before --to"
    )
    s.add_argument("--to", help="end, exclusive; default now")
    s.add_argument("--format", choices=["json", "csv"], default="json")
    s.add_argument("--out", help="write to this file instead of stdout")
    s.set_defaults(func=cmd_statement)

    s = sub.add_parser(
        "history",
        help="one order's whole history from Postgres: placed, amended, triggered, filled, cancelled, expired",
    )
    s.add_argument("member", help="the member id")
    s.add_argument("order", help="the member's order id")
    s.set_defaults(func=cmd_history)

    s = sub.add_parser(
        "sql",
        help="stream SQL over the topics (sql/flink): the Flink SQL client with the "
        "query catalog loaded, or one named query's rows",
    )
    s.add_argument(
        "action",
        nargs="?",
        default="client",
        choices=["client", "list", "run"],
        help="client (default): Flink's SQL client; list: the catalog; run NAME: print its rows",
    )
    s.add_argument("name", nargs="?", help="run: the catalog query")
    s.add_argument("--since", help="run: only records written since then (ISO time, epoch ms, or 90s/15m/2h ago)")
    s.add_argument("--timeout", type=float, default=300, help="run: seconds before giving up")
    s.add_argument("--json", action="store_true", help="run: one JSON object per row")
    s.set_defaults(func=cmd_sql)
