package io.brokerstream.pnl;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Everything one underlying equity's revaluation keeps between windows: the open positions in it
 * and in options on it (by account|instrument), the terms of those options (by instrument), and
 * which positions changed since the last window.
 *
 * <p>One state value per underlying rather than a map state of positions: a window walks all of
 * them anyway, so per-position state lookups and write-backs were pure overhead, and the heap
 * backend's checkpoints serialize this book in one bulk write ({@link PositionBookSerializer})
 * instead of field by field, byte by byte.
 *
 * <p>Position entries are mutable (what the roll-up was last told is updated in place), option
 * terms are never changed once stored (a new version replaces the entry), which is what {@link
 * #copy()} relies on.
 */
public final class PositionBook {
  /** The open positions by account|instrument; changed through {@link #put} and {@link #remove}. */
  final Map<String, PnlInput> positions;

  private final Map<String, PnlInput> byKey;

  /**
   * How many open positions hold each instrument (not state: follows the positions), so a window
   * that lists the held instruments walks instruments, not every position of the equity.
   */
  private final Map<String, Integer> holders = new HashMap<>();

  final Map<String, PnlInput> options;
  final Set<String> changed;

  /** The equity's own mark (its price) and what the outputs were last told of it (not state). */
  MarkState equityMark = new MarkState();

  public PositionBook() {
    this(new HashMap<>(), new HashMap<>(), new HashSet<>());
  }

  PositionBook(
      Map<String, PnlInput> positions, Map<String, PnlInput> options, Set<String> changed) {
    this.byKey = positions;
    this.positions = Collections.unmodifiableMap(positions);
    for (PnlInput p : positions.values()) {
      holders.merge(p.instrumentId, 1, Integer::sum);
    }
    this.options = options;
    this.changed = changed;
  }

  /**
   * A copy whose positions can be changed without touching this book's (option terms are shared).
   */
  public PositionBook copy() {
    Map<String, PnlInput> p = new HashMap<>(capacityFor(positions.size()));
    for (Map.Entry<String, PnlInput> e : byKey.entrySet()) {
      p.put(e.getKey(), e.getValue().copy());
    }
    PositionBook c = new PositionBook(p, new HashMap<>(options), new HashSet<>(changed));
    c.equityMark = equityMark;
    return c;
  }

  /** Books a position under its key, in place of what was there. */
  void put(String key, PnlInput position) {
    release(byKey.put(key, position));
    holders.merge(position.instrumentId, 1, Integer::sum);
  }

  /** Takes a (closed) position out. */
  void remove(String key) {
    release(byKey.remove(key));
  }

  private void release(PnlInput old) {
    if (old != null) {
      holders.computeIfPresent(old.instrumentId, (id, n) -> n == 1 ? null : n - 1);
    }
  }

  /** The instruments at least one open position holds. */
  Set<String> heldInstruments() {
    return Collections.unmodifiableSet(holders.keySet());
  }

  static int capacityFor(int entries) {
    return Math.max(16, (int) (entries / 0.75f) + 1);
  }

  public int size() {
    return positions.size();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof PositionBook b)
        || !changed.equals(b.changed)
        || !positions.keySet().equals(b.positions.keySet())
        || !options.keySet().equals(b.options.keySet())) {
      return false;
    }
    for (Map.Entry<String, PnlInput> e : positions.entrySet()) {
      if (!e.getValue().samePosition(b.positions.get(e.getKey()))) {
        return false;
      }
    }
    for (Map.Entry<String, PnlInput> e : options.entrySet()) {
      if (!e.getValue().sameTerms(b.options.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return positions.keySet().hashCode();
  }
}
