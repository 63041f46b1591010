package io.brokerstream.streams.topology;

import io.brokerstream.avro.Position;
import io.brokerstream.rules.PositionMath;
import io.brokerstream.rules.RiskState;
import io.brokerstream.streams.state.BookedPosition;
import io.brokerstream.streams.state.OpenOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A member's totals are sums over what its task already keeps. Its risk is the value its positions
 * commit (|quantity| x average cost x multiplier) and the P&L they realized; the buying power its
 * working orders hold is the sum of their reservations. A decision updates each total by the
 * difference it makes, and the stores of positions and open orders are changelogged, so the totals
 * need no changelog of their own: they live in unlogged stores and are summed again from the
 * restored positions and open orders whenever the task starts (fresh, moved, or revived after an
 * aborted transaction, when Kafka Streams restores the committed state and initializes the
 * processors again). That spares a changelog record per member per commit.
 *
 * <p>Positions are never deleted (a flat position keeps its realized P&L), so the sum over them is
 * the member's whole realized P&L. A position is valued with its own multiplier, the one it was
 * last booked with.
 */
final class MemberTotals {
  private MemberTotals() {}

  /** What a rebuild found: members with risk, members with reservations, positions read. */
  record Rebuilt(int riskMembers, int reservedMembers, long positions) {}

  /**
   * Replaces every total in {@code risk} and {@code reserved} by the sums over the task's state.
   */
  static Rebuilt rebuild(
      KeyValueStore<String, Position> positions,
      KeyValueStore<String, OpenOrder> open,
      KeyValueStore<String, RiskState> risk,
      KeyValueStore<String, Long> reserved) {
    Map<String, long[]> byMember = new HashMap<>();
    long read = 0;
    try (KeyValueIterator<String, Position> all = positions.all()) {
      while (all.hasNext()) {
        Position p = all.next().value;
        if (p == null) {
          continue;
        }
        read++;
        BookedPosition booked = BookedPosition.of(p);
        long[] sums = byMember.computeIfAbsent(p.getMemberId(), m -> new long[2]);
        sums[0] = Math.addExact(sums[0], PositionMath.exposure(booked.state(), p.getMultiplier()));
        sums[1] = Math.addExact(sums[1], booked.state().realized());
      }
    }
    Map<String, Long> held = new HashMap<>();
    try (KeyValueIterator<String, OpenOrder> all = open.all()) {
      while (all.hasNext()) {
        KeyValue<String, OpenOrder> entry = all.next();
        if (entry.value != null && entry.value.reserved() != 0) {
          held.merge(memberOf(entry.key), entry.value.reserved(), Math::addExact);
        }
      }
    }
    clear(risk);
    clear(reserved);
    byMember.forEach((member, sums) -> risk.put(member, new RiskState(sums[0], sums[1])));
    held.forEach(reserved::put);
    return new Rebuilt(byMember.size(), held.size(), read);
  }

  /** The member of a member|order id key. */
  private static String memberOf(String resultKey) {
    int bar = resultKey.indexOf('|');
    return bar < 0 ? resultKey : resultKey.substring(0, bar);
  }

  private static void clear(KeyValueStore<String, ?> store) {
    List<String> keys = new ArrayList<>();
    try (KeyValueIterator<String, ?> all = store.all()) {
      all.forEachRemaining(kv -> keys.add(kv.key));
    }
    keys.forEach(store::delete);
  }
}
