package io.brokerstream.streams;

/**
 * The topics of the order flow, as platform/topics.yaml names them (a test keeps the two in step).
 * Keys are UTF-8 strings.
 */
public final class Topics {
  public static final String REF_MEMBERS = "ref.members";
  public static final String REF_ACCOUNTS = "ref.accounts";
  public static final String REF_INSTRUMENTS = "ref.instruments";
  public static final String REF_EQUITY_STARTS = "ref.equity-starts";
  public static final String REF_API_KEYS = "ref.api-keys";
  public static final String PRICE_TICKS = "price-ticks";

  /** Latest tick per instrument, compacted: what the order flow prices with. */
  public static final String PRICES_LATEST = "prices.latest";

  /** Whether each equity trades: halts and resumptions, compacted. */
  public static final String PRICES_STATUS = "prices.status";

  /** Operators' halts and resumptions, partitioned like price-ticks. */
  public static final String PRICES_CONTROLS = "prices.controls";

  /**
   * The P&L flow's roll-up per member: its unrealized loss at the marks, what margin counts against
   * buying power.
   */
  public static final String PNL_MEMBERS = "pnl.members";

  public static final String ORDERS = "orders";
  public static final String ORDER_RESULTS = "order-results";

  /**
   * The positions store's changelog, read as the positions topic: Kafka Streams names it {@code
   * <application.id>-positions-changelog} (the default application id's here; a test keeps the two
   * in step). A fill writes its position once, for recovery and for every reader.
   */
  public static final String POSITIONS = "brokerstream-orders-positions-changelog";

  /** A member's cancels, keyed by member like its orders. */
  public static final String ORDER_COMMANDS = "order-commands";

  /** Working orders by the equity whose ticks price them. */
  public static final String ORDERS_RESTING = "orders.resting";

  /** Crossed working orders, back to their member. */
  public static final String ORDER_TRIGGERS = "order-triggers";

  /**
   * The same triggers written outside the book task's transaction, so the member task sees them
   * without waiting for the book's commit; a copy that arrives second finds its order gone and is
   * dropped.
   */
  public static final String ORDER_TRIGGERS_FAST = "order-triggers.fast";

  /** An order's steps between arrival and final result. */
  public static final String ORDER_EVENTS = "order-events";

  public static final String DEAD_LETTERS = "dlq.streams";

  /** Price ticks the broker refused (non-positive, absurd, unknown instrument), with the fault. */
  public static final String DEAD_TICKS = "dlq.ticks";

  private Topics() {}

  /**
   * Key of an order's result: the member and its order id. An order id is unique per member (the
   * FIX ClOrdID rule), so the same id from two members names two orders.
   */
  public static String resultKey(String memberId, String orderId) {
    return memberId + "|" + orderId;
  }

  /** Key of a position: account and instrument. */
  public static String positionKey(String accountId, String instrumentId) {
    return accountId + "|" + instrumentId;
  }
}
