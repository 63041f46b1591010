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
  public static final String PRICE_TICKS = "price-ticks";
  /** Latest tick per instrument, compacted: what the order flow prices with. */
  public static final String PRICES_LATEST = "prices.latest";
  public static final String ORDERS = "orders";
  public static final String ORDER_RESULTS = "order-results";
  public static final String POSITIONS = "positions";
  public static final String REALIZED_PNL = "realized-pnl";
  public static final String DEAD_LETTERS = "dlq.streams";

  private Topics() {}

  /** Key of a position: account and instrument. */
  public static String positionKey(String accountId, String instrumentId) {
    return accountId + "|" + instrumentId;
  }
}
