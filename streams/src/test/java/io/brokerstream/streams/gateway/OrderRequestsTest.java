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
    return "{\"account_id\":\"A1\",\"instrument_id\":\"EQ1\",\"side\":\"BUY\",\"quantity\":1" + extra + "}";
  }

  @Test
  void aPriceSentAsAJsonNumberIsReadExactly() {
    assertThat(parse(with(",\"limit_price\":0.1")).getLimitPrice().toPlainString()).isEqualTo("0.100000");
    assertThat(parse(with(",\"limit_price\":123456789012.123456")).getLimitPrice().toPlainString())
        .isEqualTo("123456789012.123456");
  }

  @Test
  void timeInForceIsIocUnlessTheOrderSaysGtc() {
    assertThat(parse(with("")).getTimeInForce()).isEqualTo(io.brokerstream.avro.TimeInForce.IOC);
    assertThat(parse(with(",\"time_in_force\":\"GTC\",\"limit_price\":\"9\"")).getTimeInForce())
        .isEqualTo(io.brokerstream.avro.TimeInForce.GTC);
    Order stop = parse(with(",\"time_in_force\":\"DAY\",\"stop_price\":105.25"));
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
  @CsvSource(delimiter = '#', value = {
      "nothing to change # {} # give a new",
      "only nulls # {\"quantity\":null} # give a new",
      "a field an amend cannot change # {\"side\":\"SELL\"} # side",
      "an account move # {\"account_id\":\"A2\",\"quantity\":1} # account_id",
      "a fractional quantity # {\"quantity\":1.5} # quantity",
      "a limit with 7 places # {\"limit_price\":\"1.0000001\"} # decimal places",
      "a stop that is not a number # {\"stop_price\":\"soon\"} # stop_price",
      "not an object # [1] # expected a JSON object",
  })
  void hostileAmendsAre400NamingTheProblem(String what, String body, String mentions) {
    assertThatThrownBy(() -> amend(body)).as(what).isInstanceOfSatisfying(HttpError.class, e -> {
      assertThat(e.status).isEqualTo(400);
      assertThat(e.getMessage()).contains(mentions);
    });
  }

  @Test
  void aGoodOrderParses() {
    Order o = parse(with(",\"order_id\":\"ab-1.2:x_y\",\"limit_price\":\"12.5\",\"client_ts\":" + (NOW - 5000)));
    assertThat(o.getOrderId()).isEqualTo("ab-1.2:x_y");
    assertThat(o.getLimitPrice().toPlainString()).isEqualTo("12.500000");
    assertThat(o.getClientTs().toEpochMilli()).isEqualTo(NOW - 5000);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '#', value = {
      "trailing JSON # {\"side\":\"BUY\"} {\"x\":1} # not JSON",
      "two values # [1] [2] # not JSON",
      "duplicate keys # {\"account_id\":\"A1\",\"account_id\":\"A2\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # not JSON",
      "NaN # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":NaN} # not JSON",
      "Infinity as a limit # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"Infinity\"} # limit_price",
      "NaN as a limit # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"NaN\"} # limit_price",
      "huge exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":1e999999999} # too large",
      "tiny exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"limit_price\":\"1e-999999999\"} # decimal places",
      "quantity beyond 64 bits # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":99999999999999999999} # quantity",
      "quantity with an exponent # {\"account_id\":\"A1\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1e400} # quantity",
      "control character in an id # {\"account_id\":\"A\\u0000\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # account_id",
      "newline in an order id # {\"order_id\":\"a\\nb\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
      "bar in an order id # {\"order_id\":\"a|b\",\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1} # order_id",
      "client time far in the past # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":1760000000000} # client_ts",
      "client time beyond 64 bits # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":9223372036854775808} # client_ts",
      "negative client time # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"client_ts\":-9223372036854775808} # client_ts",
      "unknown time in force # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"time_in_force\":\"FOREVER\"} # time_in_force",
      "time in force not a string # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"time_in_force\":1} # time_in_force",
      "unknown field # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"admin\":true} # admin",
      "stop not a number # {\"account_id\":\"A\",\"instrument_id\":\"E\",\"side\":\"BUY\",\"quantity\":1,\"stop_price\":true} # stop_price",
  })
  void hostileBodiesAre400NamingTheProblem(String what, String body, String mentions) {
    assertThatThrownBy(() -> parse(body)).as(what).isInstanceOfSatisfying(HttpError.class, e -> {
      assertThat(e.status).isEqualTo(400);
      assertThat(e.getMessage()).contains(mentions);
    });
  }
}
