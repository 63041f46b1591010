package io.brokerstream.streams.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderAction;
import io.brokerstream.avro.OrderCommand;
import io.brokerstream.avro.Side;
import io.brokerstream.avro.TimeInForce;
import io.brokerstream.rules.Identifiers;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * JSON order requests into Orders. Only the shape is checked here (types, required fields, decimal
 * places, identifiers, timestamps): a malformed request is answered 400 naming the field and
 * nothing is written. JSON is read strictly: one value and nothing after it, no duplicate keys, no
 * NaN. Business rules (a zero quantity, an unknown instrument) are the order flow's, which answers
 * them with a reason code like any other order.
 */
final class OrderRequests {
  static final int MAX_BATCH = 1000;
  private static final Set<String> FIELDS =
      Set.of(
          "order_id",
          "account_id",
          "instrument_id",
          "side",
          "quantity",
          "limit_price",
          "short_sale",
          "client_ts",
          "trace_id",
          "time_in_force",
          "stop_price");
  private static final Set<String> AMEND_FIELDS =
      Set.of("quantity", "limit_price", "stop_price", "trace_id");

  /**
   * client_ts is the client's claim, kept beside the broker's own times and never used to decide:
   * it must be a time of this century (2000-01-01 to 2099-12-31), which any database and any date
   * type can hold.
   */
  static final long MIN_CLIENT_TS = 946_684_800_000L;

  static final long MAX_CLIENT_TS = 4_102_444_799_999L;
  private final ObjectMapper json;

  OrderRequests(ObjectMapper json) {
    this.json = json;
  }

  static ObjectMapper strictJson() {
    return com.fasterxml.jackson.databind.json.JsonMapper.builder()
        .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        // a price sent as a JSON number is read exactly, never through a double
        .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
        .build();
  }

  Order one(byte[] body, long nowMs) {
    return parse(tree(body), "", nowMs);
  }

  /** All or nothing: one bad order fails the batch with every problem listed. */
  List<Order> batch(byte[] body, long nowMs) {
    JsonNode root = tree(body);
    JsonNode items = root.isObject() && root.size() == 1 ? root.get("orders") : null;
    if (items == null || !items.isArray()) {
      throw HttpError.badField("orders", "expected {\"orders\": [...]} and nothing else");
    }
    if (items.size() == 0 || items.size() > MAX_BATCH) {
      throw HttpError.badField(
          "orders", "a batch holds 1 to " + MAX_BATCH + " orders, got " + items.size());
    }
    List<Order> orders = new ArrayList<>(items.size());
    List<String> problems = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      try {
        orders.add(parse(items.get(i), "orders[" + i + "].", nowMs));
      } catch (HttpError e) {
        problems.add(e.getMessage());
      }
    }
    if (!problems.isEmpty()) {
      throw new HttpError(400, String.join("; ", problems), problems.get(0).split(":")[0]);
    }
    return orders;
  }

  private JsonNode tree(byte[] body) {
    try {
      JsonNode node = json.readTree(body);
      if (node == null || node.isMissingNode()) {
        throw new HttpError(400, "empty body: expected a JSON order");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new HttpError(
          400,
          "body is not JSON (one value, no duplicate keys, no NaN): "
              + abbreviate(String.valueOf(e.getOriginalMessage())));
    } catch (IOException e) {
      throw new HttpError(400, "cannot read the body: " + e.getMessage());
    }
  }

  private Order parse(JsonNode node, String at, long nowMs) {
    if (!node.isObject()) {
      throw HttpError.badField(
          at.isEmpty() ? "order" : at.substring(0, at.length() - 1), "expected a JSON object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw HttpError.badField(
            at + name,
            "unknown field (allowed: "
                + String.join(", ", FIELDS.stream().sorted().toList())
                + ")");
      }
    }
    String side = side(node, at);
    JsonNode quantity = node.get("quantity");
    if (quantity == null || quantity.isNull()) {
      throw HttpError.badField(at + "quantity", "required");
    }
    if (!quantity.isIntegralNumber() || !quantity.canConvertToLong()) {
      throw HttpError.badField(
          at + "quantity",
          "must be a whole number within 64 bits, got " + abbreviate(quantity.toString()));
    }
    String orderId = id(node, at, "order_id", false, Identifiers.MAX_ID);
    JsonNode ts = node.get("client_ts");
    if (ts != null && !ts.isNull() && !(ts.isIntegralNumber() && ts.canConvertToLong())) {
      throw HttpError.badField(
          at + "client_ts", "must be epoch milliseconds, got " + abbreviate(ts.toString()));
    }
    // Compared with fixed bounds, never as a difference (|ts - now| overflows for ts near
    // Long.MIN_VALUE).
    if (ts != null && !ts.isNull() && !plausibleClientTs(ts.longValue())) {
      throw HttpError.badField(
          at + "client_ts",
          "must be epoch milliseconds from "
              + MIN_CLIENT_TS
              + " (2000-01-01) to "
              + MAX_CLIENT_TS
              + " (2099-12-31), got "
              + ts.longValue());
    }
    JsonNode shortSale = node.get("short_sale");
    if (shortSale != null && !shortSale.isNull() && !shortSale.isBoolean()) {
      throw HttpError.badField(at + "short_sale", "must be true or false, got " + shortSale);
    }
    JsonNode tif = node.get("time_in_force");
    TimeInForce timeInForce = TimeInForce.IOC;
    if (tif != null && !tif.isNull()) {
      if (!tif.isTextual() || !Set.of("IOC", "GTC", "DAY").contains(tif.asText())) {
        throw HttpError.badField(
            at + "time_in_force",
            "must be \"IOC\", \"DAY\" or \"GTC\", got " + abbreviate(tif.toString()));
      }
      timeInForce = TimeInForce.valueOf(tif.asText());
    }
    return Order.newBuilder()
        .setTimeInForce(timeInForce)
        .setOrderId(orderId != null ? orderId : UUID.randomUUID().toString())
        .setAccountId(id(node, at, "account_id", true, Identifiers.MAX_ID))
        .setInstrumentId(id(node, at, "instrument_id", true, Identifiers.MAX_ID))
        .setSide(Side.valueOf(side))
        .setQuantity(quantity.longValue())
        .setLimitPrice(decimal(node, at, "limit_price"))
        .setStopPrice(decimal(node, at, "stop_price"))
        .setShortSale(shortSale != null && shortSale.asBoolean())
        .setClientTs(Instant.ofEpochMilli(ts != null && !ts.isNull() ? ts.longValue() : nowMs))
        .setTraceId(id(node, at, "trace_id", false, Identifiers.MAX_TRACE_ID))
        .build();
  }

  /**
   * An amend of a working order: a new quantity, limit_price or stop_price (at least one). Whether
   * the order can take it (it still works, buying power for a larger quantity, a positive price) is
   * the flow's to say.
   */
  OrderCommand amend(byte[] body, String orderId, long nowMs) {
    JsonNode node = tree(body);
    if (!node.isObject()) {
      throw HttpError.badField("amend", "expected a JSON object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!AMEND_FIELDS.contains(name)) {
        throw HttpError.badField(
            name,
            "unknown field (an amend may change: "
                + String.join(", ", AMEND_FIELDS.stream().sorted().toList())
                + ")");
      }
      if (node.get(name).isNull()) {
        throw HttpError.badField(name, "null: leave out what does not change");
      }
    }
    JsonNode quantity = node.get("quantity");
    Long newQuantity = null;
    if (quantity != null && !quantity.isNull()) {
      if (!quantity.isIntegralNumber() || !quantity.canConvertToLong()) {
        throw HttpError.badField(
            "quantity",
            "must be a whole number within 64 bits, got " + abbreviate(quantity.toString()));
      }
      newQuantity = quantity.longValue();
    }
    BigDecimal limit = decimal(node, "", "limit_price");
    BigDecimal stop = decimal(node, "", "stop_price");
    if (newQuantity == null && limit == null && stop == null) {
      throw HttpError.badField("amend", "give a new quantity, limit_price or stop_price");
    }
    return OrderCommand.newBuilder()
        .setOrderId(orderId)
        .setAction(OrderAction.AMEND)
        .setClientTs(Instant.ofEpochMilli(nowMs))
        .setTraceId(id(node, "", "trace_id", false, Identifiers.MAX_TRACE_ID))
        .setQuantity(newQuantity)
        .setLimitPrice(limit)
        .setStopPrice(stop)
        .build();
  }

  static OrderCommand cancel(String orderId, long nowMs) {
    return OrderCommand.newBuilder()
        .setOrderId(orderId)
        .setAction(OrderAction.CANCEL)
        .setClientTs(Instant.ofEpochMilli(nowMs))
        .build();
  }

  private static String side(JsonNode node, String at) {
    JsonNode value = node.get("side");
    if (value == null || value.isNull()) {
      throw HttpError.badField(at + "side", "required");
    }
    if (!value.isTextual() || !(value.asText().equals("BUY") || value.asText().equals("SELL"))) {
      throw HttpError.badField(
          at + "side", "must be BUY or SELL, got " + abbreviate(value.toString()));
    }
    return value.asText();
  }

  /** An id field: absent (when allowed) or held to the one id rule. */
  private static String id(
      JsonNode node, String at, String field, boolean required, int maxLength) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      if (required) {
        throw HttpError.badField(at + field, "required");
      }
      return null;
    }
    if (!value.isTextual()) {
      throw HttpError.badField(at + field, "must be a string, got " + abbreviate(value.toString()));
    }
    String problem = Identifiers.problem(value.asText(), maxLength);
    if (problem != null) {
      throw HttpError.badField(at + field, problem);
    }
    return value.asText();
  }

  static boolean plausibleClientTs(long clientTs) {
    return clientTs >= MIN_CLIENT_TS && clientTs <= MAX_CLIENT_TS;
  }

  private static String abbreviate(String text) {
    return text.length() <= 40 ? text : text.substring(0, 37) + "...";
  }

  /**
   * A price: a JSON string of ASCII digits, an optional '-', and at most 6 decimal places and 12
   * integer digits (decimal(18,6)); nothing else (no exponent, '+', spaces, or digits of other
   * scripts, which Java's BigDecimal would read). Not a JSON number: many clients write those
   * through binary floating point.
   */
  private static BigDecimal decimal(JsonNode node, String at, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual() || !isAsciiDecimal(value.asText())) {
      throw HttpError.badField(
          at + field,
          "must be a string of ASCII digits with at most 6 decimal places (like "
              + "\"123.45\"), got "
              + abbreviate(value.toString()));
    }
    BigDecimal price = new BigDecimal(value.asText());
    // Judge size before scaling; leading zeros do not count.
    BigDecimal stripped = price.stripTrailingZeros();
    if (stripped.precision() - stripped.scale() > 12) {
      throw HttpError.badField(at + field, "too large: at most 12 digits before the point");
    }
    return price.setScale(6, java.math.RoundingMode.UNNECESSARY);
  }

  /** -?[0-9]+(\.[0-9]{1,6})? in ASCII, at most 32 characters (magnitude is judged after). */
  static boolean isAsciiDecimal(String text) {
    int n = text.length();
    if (n == 0 || n > 32) {
      return false;
    }
    int i = text.charAt(0) == '-' ? 1 : 0;
    int digits = 0;
    while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
      i++;
      digits++;
    }
    if (digits == 0) {
      return false;
    }
    if (i == n) {
      return true;
    }
    if (text.charAt(i) != '.') {
      return false;
    }
    i++;
    int places = 0;
    while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
      i++;
      places++;
    }
    return i == n && places >= 1 && places <= 6;
  }
}
