package io.brokerstream.streams.topology;

/** State stores of the order flow; the gateway queries them by these names. */
public final class StoreNames {
  // global: every instance holds all of it
  public static final String MEMBERS = "members";
  public static final String ACCOUNTS = "accounts";
  public static final String INSTRUMENTS = "instruments";
  public static final String EQUITY_STARTS = "equity-starts";
  public static final String PRICES = "prices";

  /** key SHA-256 -> the API key's member and status: the gateway's identity lookup. */
  public static final String API_KEYS = "api-keys";

  // per member task (co-partitioned with orders, keyed by member)
  /** account|instrument -> the position and the cash its fills moved. */
  public static final String POSITIONS = "positions";

  public static final String MEMBER_RISK = "member-risk";

  /**
   * member|order id -> the results of the task's members, read back from the task's own partition
   * of order-results (the topic is partitioned by member): the gateway's reads and, with {@link
   * #RESULTS_UNREAD}, the order ids the task has decided.
   */
  public static final String ORDER_RESULTS = "order-results-store";

  /**
   * member|order id -> when: results the task emitted and has not read back yet (in memory, no
   * changelog: a restarted task reads back every committed result before its first record).
   */
  public static final String RESULTS_UNREAD = "results-unread";

  /**
   * member|order id -> a working order: the order, when it arrived, what it reserves, its book key.
   */
  public static final String OPEN_ORDERS = "open-orders";

  /**
   * expiry time|member|order id -> the expiry: the DAY orders of the task's members, soonest first.
   */
  public static final String ORDER_EXPIRIES = "order-expiries";

  /** member -> buying power reserved for its working buys. */
  public static final String MEMBER_RESERVED = "member-reserved";

  // per equity task (co-partitioned with price-ticks)
  /**
   * underlying|group|level|placed time|member|order id -> a working order, by the level that
   * triggers it.
   */
  public static final String RESTING_BOOK = "resting-book";

  // dedupes ticks between commits (in memory, no changelog: only the record cache's flush reads it)
  public static final String LATEST_TICKS = "latest-ticks";

  /** Instruments halted, in the tick task (changelogged: a halt outlives a restart). */
  public static final String PRICE_HALTS = "price-halts";

  /** Each member's unrealized loss at the marks (pnl.members), a global store in memory. */
  public static final String MEMBER_MARKS = "member-marks";

  /** Whether each equity trades (prices.status), a global store. */
  public static final String PRICE_STATUS = "price-status";

  private StoreNames() {}

  /** In the accounts store: the member index entry of an account, "m|MEMBER|ACCOUNT" -> cash. */
  public static String memberIndexKey(String memberId, String accountId) {
    return "m|" + memberId + "|" + accountId;
  }

  public static String memberIndexPrefix(String memberId) {
    return "m|" + memberId + "|";
  }

  /** In the accounts store: the account entry, "a|ACCOUNT". */
  public static String accountKey(String accountId) {
    return "a|" + accountId;
  }

  /** In the accounts store: the member an account first belonged to, "o|ACCOUNT", kept for good. */
  public static String ownerKey(String accountId) {
    return "o|" + accountId;
  }
}
