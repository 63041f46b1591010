package io.brokerstream.streams.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brokerstream.avro.Order;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OrderRequestsTest {
  private static final long NOW = 1_795_000_000_000L;
  private final OrderRequests requests = new OrderRequests(OrderRequests.strictJson());

  private Order parse(String json) {
    return requests.one(json.getBytes(StandardCharsets.UTF_8), NOW);
  }

  private static String with(String extra) {
    return "{\"account_id\":\"A1\",\"instrument_id\":\"EQ1\",\"side\":\"BUY\",\"quantity\":1"
        + extra
        + "}";
  }

  @Test
  void aPriceIsAStringReadExactlyNeverAJsonNumber() {
    assertThat(parse(with(",\"limit_price\":\"0.1\"")).getLimitPrice().toPlainString())
        .isEqualTo("0.100000");
    assertThat(
            parse(with(",\"limit_price\":\"123456789012.123456\"")).getLimitPrice().toPlainString())
        .isEqualTo("123456789012.123456");
    assertThatThrownBy(() -> parse(with(",\"limit_price\":0.1")))
        .hasMessageContaining("limit_price");
  }

  @Test
  void timeInForceIsIocUnlessTheOrderSaysGtc() {
    assertThat(parse(with("")).getTimeInForce()).isEqualTo(io.brokerstream.avro.TimeInForce.IOC);
    assertThat(parse(with(",\"time_in_force\":\"GTC\",\"limit_price\":\"9\"")).getTimeInForce())
        .isEqualTo(io.brokerstream.avro.TimeInForce.GTC);
    Order stop = parse(with(",\"time_in_force\":\"DAY\",\"stop_price\":\"105.25\""));
    assertThat(stop.getTimeInForce()).isEqualTo(io.brokerstream.avro.TimeInForce.DAY);
    assertThat(stop.getStopPrice().toPlainString()).isEqualTo("105.250000");
  }

  private io.brokerstream.avro.OrderCommand amend(String json) {
    return requests.amend(json.getBytes(StandardCharsets.UTF_8), "o-1", NOW);
  }

  @Test
  void anAmendCarriesOnlyWhatItChanges() {
    io.brokerstream.avro.OrderCommand c = amend("{\"quantity\":7,\"limit_price\":\"9.5\"}");
    assertThat(c.getAction()).isEqualTo(io.brokerstream.avro.OrderAction.AMEND);
    assertThat(c.getOrderId()).isEqualTo("o-1");
    assertThat(c.getQuantity()).isEqualTo(7);
    assertThat(c.getLimitPrice().toPlainString()).isEqualTo("9.500000");
    assertThat(c.getStopPrice()).isNull();
    assertThat(c.getClientTs().toEpochMilli()).isEqualTo(NOW);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        "nothing to change # {} # give a new",
        "a null # {\"quantity\":null} # leave out what does not change",
        "only a trace id # {\"trace_id\":\"t-1\"} # give a new",
        "a field an amend cannot change # {\"side\":\"SELL\"} # side",
        "an account move # {\"account_id\":\"A2\",\"quantity\":1} # account_id",
        "a fractional quantity # {\"quantity\":1.5} # quantity",
        "a limit with 7 places # {\"limit_price\":\"1.0000001\"} # decimal places",
        "a stop that is not a number # {\"stop_price\":\"soon\"} # stop_price",
        "not an object # [1] # expected a JSON object",
      })
  void hostileAmendsAre400NamingTheProblem(String what, String body, String mentions) {
    assertThatThrownBy(() -> amend(body))
        .as(what)
        .isInstanceOfSatisfying(
            HttpError.class,
            e -> {
              assertThat(e.status).isEqualTo(400);
              assertThat(e.getMessage()).contains(mentions);
            });
  }

  @Test
  void everyBoundHoldsAtItsEdge() {
    long first = OrderRequests.MIN_CLIENT_TS;
    long last = OrderRequests.MAX_CLIENT_TS;
    assertThat(parse(with(",\"client_ts\":" + first)).getClientTs().toEpochMilli())
        .isEqualTo(first);
    assertThat(parse(with(",\"client_ts\":" + last)).getClientTs().toEpochMilli()).isEqualTo(last);
    assertThatThrownBy(() -> parse(with(",\"client_ts\":" + (first - 1))))
        .hasMessageContaining("client_ts");
    assertThatThrownBy(() -> parse(with(",\"client_ts\":" + (last + 1))))
        .hasMessageContaining("client_ts");
    assertThat(OrderRequests.plausibleClientTs(Long.MIN_VALUE)).isFalse();
    assertThat(OrderRequests.plausibleClientTs(Long.MAX_VALUE)).isFalse();
    assertThat(OrderRequests.plausibleClientTs(Long.MIN_VALUE + NOW)).isFalse();
    // the shape is the gateway's (a whole number within 64 bits); the size, 1 to
    // orders.max-quantity, the flow's
    assertThat(
            parse(with("").replace("\"quantity\":1", "\"quantity\":" + Long.MAX_VALUE))
                .getQuantity())
        .isEqualTo(Long.MAX_VALUE);
    assertThat(
            parse(with(",\"limit_price\":\"999999999999.999999\"")).getLimitPrice().toPlainString())
        .isEqualTo("999999999999.999999");
    assertThat(parse(with(",\"limit_price\":\"-0.000001\"")).getLimitPrice().toPlainString())
        .isEqualTo("-0.000001");
    assertThat(parse(with(",\"order_id\":\"" + "a".repeat(64) + "\"")).getOrderId()).hasSize(64);
    assertThat(parse(with(",\"trace_id\":\"" + "t".repeat(128) + "\"")).getTraceId()).hasSize(128);
    assertThatThrownBy(() -> parse(with(",\"trace_id\":\"" + "t".repeat(129) + "\"")))
        .hasMessageContaining("trace_id");
  }

  @ParameterizedTest(name = "{0} is an ASCII decimal: {1}")
  @CsvSource({
    "0, true",
    "12, true",
    "-12.5, true",
    "1.123456, true",
    "007.10, true",
    "1.1234567, false",
    "'', false",
    "-, false",
    "1., false",
    ".1, false",
    "1.2.3, false",
    "1e5, false",
    "+1, false",
    "' 1', false",
    "'\u0661', false",
    "'1\u0662', false",
    "0x10, false"
  })
  void asciiDecimals(String text, boolean decimal) {
    assertThat(OrderRequests.isAsciiDecimal(text)).isEqualTo(decimal);
  }

  @Test
  void aGoodOrderParses() {
    Order o =
        parse(
            with(
                ",\"order_id\":\"ab-1.2:x_y\",\"limit_price\":\"12.5\",\"client_ts\":"
                    + (NOW - 5000)));
    assertThat(o.getOrderId()).isEqualTo("ab-1.2:x_y");
    assertThat(o.getLimitPrice().toPlainString()).isEqualTo("12.500000");
    assertThat(o.getClientTs().toEpochMilli()).isEqualTo(NOW - 5000);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '#',
      value = {
        "trailing JSON # {\"side\":\"BUY\"} {\"x\":1} # not JSON",
        "two values # [1] [2] # not JSON",
        "duplicate keys # {\"account_id\":\"A1\",\"account_id\":\"A2\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # not JSON",
        "NaN # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":NaN} # not JSON",
        "Infinity as a limit # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"Infinity\"} # limit_price",
        "NaN as a limit # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"NaN\"} # limit_price",
        "huge exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":1e999999999} # limit_price",
        "tiny exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"1e-999999999\"} # decimal places",
        "quantity beyond 64 bits # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":99999999999999999999} # quantity",
        "quantity with an exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1e400} # quantity",
        "control character in an id # {\"account_id\":\"A\\u0000\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # account_id",
        "newline in an order id # {\"order_id\":\"a\\nb\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
        "bar in an order id # {\"order_id\":\"a|b\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
        "client time before 2000 # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":946684799999} # client_ts",
        "client time beyond 64 bits # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":9223372036854775808} # client_ts",
        "negative client time # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":-9223372036854775808} # client_ts",
        "unknown time in force # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"time_in_force\":\"FOREVER\"} # time_in_force",
        "time in force not a string # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"time_in_force\":1} # time_in_force",
        "unknown field # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"admin\":true} # admin",
        "stop not a number # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"stop_price\":true} # stop_price",
        "Arabic-Indic digits # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"\u0661\u0662.\u0665\"} # limit_price",
        "fullwidth digits # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"\uff11\uff12\"} # limit_price",
        "a plus sign # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"+12\"} # limit_price",
        "spaces around # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\" 12\"} # limit_price",
        "an exponent in a string # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"1e2\"} # limit_price",
        "a bare point # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"12.\"} # limit_price",
        "no integer part # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\".5\"} # limit_price",
        "13 integer digits # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"1234567890123\"} # too large",
        "client time that overflows a difference # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":-9223370241854775808} # client_ts",
        "client time after 2099 # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":4102444800000} # client_ts",
        "a price as a JSON number # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":12.5} # limit_price",
        "a fullwidth letter in an account # {\"account_id\":\"\uff21\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # account_id",
        "a space in an instrument # {\"account_id\":\"A\",\"instrument_id\":\"E 1\",\"side\":\"BUY\",\"quantity\":1} # instrument_id",
        "an order id of 65 characters # {\"order_id\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
        "an empty order id # {\"order_id\":\"\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
        "an order id that is a number # {\"order_id\":7,\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
        "a bar in a trace id # {\"trace_id\":\"t|1\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # trace_id",
      })
  void hostileBodiesAre400NamingTheProblem(String what, String body, String mentions) {
    assertThatThrownBy(() -> parse(body))
        .as(what)
        .isInstanceOfSatisfying(
            HttpError.class,
            e -> {
              assertThat(e.status).isEqualTo(400);
              assertThat(e.getMessage()).contains(mentions);
            });
  }
}
