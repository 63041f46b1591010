"""Replaying positions from orders and fills: the arithmetic the integration tests check the flow with."""

from decimal import Decimal

from brokerstream.ops.flowcheck import Message, replay_positions, result_key


def order(partition, offset, order_id, side, quantity, member="M1", account="A1", instrument="EQ1"):
    value = {
        "order_id": order_id,
        "account_id": account,
        "instrument_id": instrument,
        "side": side,
        "quantity": quantity,
    }
    return Message(member, value, partition, offset, 0)


def fill(order_id, price, member="M1", multiplier=1):
    return result_key(member, order_id), (Decimal(price), multiplier)


def test_buys_average_and_a_sell_realizes_against_the_average():
    orders = [order(0, 0, "o1", "BUY", 10), order(0, 1, "o2", "BUY", 30), order(0, 2, "o3", "SELL", 20)]
    fills = dict([fill("o1", "100"), fill("o2", "104"), fill("o3", "110")])
    qty, avg, realized = replay_positions(orders, fills)["A1|EQ1"]
    assert (qty, avg, realized) == (20, Decimal("103.000000"), Decimal("140"))


def test_adds_keep_their_exact_cost_so_a_position_sold_out_realizes_what_its_fills_moved():
    # 1 at 1 micro and 1 at 2: the average (1.5 micros) rounds to 2, the cost stays 3 micros
    orders = [order(0, 0, "o1", "BUY", 1), order(0, 1, "o2", "BUY", 1), order(0, 2, "o3", "SELL", 2)]
    fills = dict([fill("o1", "0.000001"), fill("o2", "0.000002"), fill("o3", "0.000002")])
    assert replay_positions(orders, fills)["A1|EQ1"] == (0, Decimal(0), Decimal("0.000001"))
    assert replay_positions(orders[:2], fills)["A1|EQ1"] == (2, Decimal("0.000002"), Decimal(0))


def test_a_retry_books_once_and_an_order_without_a_fill_books_nothing():
    orders = [order(0, 0, "o1", "BUY", 10), order(0, 1, "o1", "BUY", 10), order(0, 2, "o2", "BUY", 5)]
    fills = dict([fill("o1", "100")])
    assert replay_positions(orders, fills)["A1|EQ1"][0] == 10


def test_records_decided_by_the_other_architecture_are_left_out():
    orders = [order(0, 0, "o1", "BUY", 10), order(1, 0, "o2", "BUY", 7), order(0, 1, "o3", "SELL", 4)]
    fills = dict([fill("o1", "100"), fill("o2", "90"), fill("o3", "100")])
    assert replay_positions(orders, fills)["A1|EQ1"][0] == 13
    # same offset on another partition is another record
    assert replay_positions(orders, fills, {(1, 0)})["A1|EQ1"][0] == 6
    assert replay_positions(orders, fills, {(0, 0), (0, 1)})["A1|EQ1"] == (7, Decimal("90.000000"), Decimal(0))


def test_cancelled_orders_balance_the_count_and_a_working_one_is_missing():
    from brokerstream.ops.flowcheck import reconcile

    def result(order_id, status, reason=None):
        return Message(None, {"member_id": "M1", "order_id": order_id, "status": status, "reason": reason}, 0, 0, 0)

    keys = [result_key("M1", o) for o in ("a", "b", "c", "d")]
    rec = reconcile(keys, [result("a", "ACCEPTED"), result("b", "REJECTED", "NO_PRICE"), result("c", "CANCELLED")], [])
    assert (rec.accepted, sum(rec.rejected.values()), rec.cancelled) == (1, 1, 1)
    assert rec.missing == [result_key("M1", "d")] and not rec.balanced
    rec = reconcile(
        keys[:3], [result("a", "ACCEPTED"), result("b", "REJECTED", "NO_PRICE"), result("c", "CANCELLED")], []
    )
    assert rec.balanced and rec.summary()["cancelled"] == 1


def test_expired_day_orders_balance_the_count():
    from brokerstream.ops.flowcheck import reconcile

    def result(order_id, status):
        return Message(None, {"member_id": "M1", "order_id": order_id, "status": status, "reason": None}, 0, 0, 0)

    keys = [result_key("M1", o) for o in ("a", "b")]
    rec = reconcile(keys, [result("a", "EXPIRED"), result("b", "CANCELLED")], [])
    assert rec.balanced and rec.summary()["expired"] == 1 and rec.summary()["cancelled"] == 1
    rec = reconcile(keys, [result("a", "EXPIRED"), result("a", "EXPIRED"), result("b", "ACCEPTED")], [])
    assert not rec.balanced and rec.duplicates == [result_key("M1", "a")]


def test_the_sync_is_waited_for_up_to_the_last_record_it_can_write():
    from brokerstream.ops.reconcile import after_last_records

    read = [Message("k", None, 0, 3, 0), Message("k", None, 0, 7, 0), Message("k", None, 1, 2, 0)]
    # the ends of a transactional topic are commit markers: only the records read count
    assert after_last_records(read) == {0: 8, 1: 3}
    # a record Connect dead-lettered before the sink saw it does not move the mark
    assert after_last_records(read, {(0, 7)}) == {0: 4, 1: 3}
    assert after_last_records([]) == {}
