package io.brokerstream.streams.topology;

import io.brokerstream.avro.RestingOrder;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The best level of each group of each equity's book, in memory: the highest buy limit and sell
 * stop, the lowest sell limit and buy stop, and whether any option rests. A tick crosses a group
 * only if it crosses that group's best level, so the book is read only when something triggers.
 * Derived from the store and never written to it: built lazily, one seek per group, in each
 * processor instance (a restored or revived task starts a new one), and forgotten for a group
 * whenever its best entry leaves.
 */
final class BookTops {
  /** Book groups: buy/sell limit/stop on the equity itself, and options on it. */
  enum Group {
    BL(true),
    SL(false),
    BS(false),
    SS(true),
    O(false);

    private final boolean fromPriceUp;

    Group(boolean fromPriceUp) {
      this.fromPriceUp = fromPriceUp;
    }

    /** Crossed by a price at or below the level (so the crossed range runs from the price up). */
    boolean fromPriceUp() {
      return fromPriceUp;
    }
  }

  private static final long UNKNOWN = Long.MIN_VALUE;
  private static final long NONE = -1;
  private final KeyValueStore<String, RestingOrder> book;
  private final Map<String, long[]> tops = new HashMap<>();

  BookTops(KeyValueStore<String, RestingOrder> book) {
    this.book = book;
  }

  boolean crossed(String equity, Group g, long price) {
    long best = best(equity, g);
    return best != NONE && (g.fromPriceUp() ? best >= price : best <= price);
  }

  boolean any(String equity, Group g) {
    return best(equity, g) != NONE;
  }

  /** An entry was put (added) or deleted under {@code key} of the equity's book. */
  void changed(String equity, String key, boolean added) {
    long[] t = tops.get(equity);
    if (t == null) {
      return;
    }
    int start = equity.length() + 1;
    Group g = Group.valueOf(key.substring(start, key.indexOf('|', start)));
    int i = g.ordinal();
    if (t[i] == UNKNOWN) {
      return;
    }
    long level = g == Group.O ? 0 : level(equity, key);
    if (added) {
      t[i] =
          t[i] == NONE || g == Group.O
              ? level
              : g.fromPriceUp() ? Math.max(t[i], level) : Math.min(t[i], level);
    } else if (t[i] == level) {
      t[i] = UNKNOWN; // the best left (or an option): read it again when next asked
    }
  }

  private long best(String equity, Group g) {
    long[] t =
        tops.computeIfAbsent(equity, e -> new long[] {UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN});
    int i = g.ordinal();
    if (t[i] == UNKNOWN) {
      String prefix = equity + "|" + g + "|";
      // the best is the last key of a group crossed from the price up (highest level), else the
      // first
      try (KeyValueIterator<String, RestingOrder> it =
          g.fromPriceUp()
              ? book.reverseRange(prefix, prefix + "~")
              : book.range(prefix, prefix + "~")) {
        t[i] = !it.hasNext() ? NONE : g == Group.O ? 0 : level(equity, it.next().key);
      }
    }
    return t[i];
  }

  private static long level(String equity, String key) {
    int from = key.indexOf('|', equity.length() + 1) + 1;
    return Long.parseLong(key.substring(from, from + 19));
  }
}
