package io.brokerstream.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class NioHttpResponseTest {
  private static NioHttp.Response parse(String raw) {
    byte[] b = raw.getBytes(StandardCharsets.ISO_8859_1);
    return NioHttp.Response.parse(b, b.length);
  }

  @Test
  void aResponseWithALengthIsCompleteOnlyWithItsWholeBody() {
    String head = "HTTP/1.1 202 Accepted\r\nDate: x\r\nContent-length: 11\r\n\r\n";
    assertThat(parse(head + "{\"a\":1}")).isNull();
    NioHttp.Response r = parse(head + "{\"a\":12345}");
    assertThat(r.status()).isEqualTo(202);
    assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":12345}");
    assertThat(r.close()).isFalse();
  }

  @Test
  void headersAreNotCompleteWithoutTheBlankLine() {
    assertThat(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")).isNull();
    assertThat(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status()).isEqualTo(200);
  }

  @Test
  void chunkedBodiesAreJoined() {
    String raw =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n";
    assertThat(new String(parse(raw).body(), StandardCharsets.UTF_8)).isEqualTo("Wikipedia");
    assertThat(parse(raw.substring(0, raw.length() - 2))).isNull();
  }

  @Test
  void connectionCloseAndHttp10CloseTheConnection() {
    assertThat(
            parse("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .close())
        .isTrue();
    assertThat(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").close()).isTrue();
  }

  @Test
  void somethingThatIsNotHttpFailsLoudly() {
    assertThatThrownBy(() -> parse("SSH-2.0-OpenSSH\r\n\r\n"))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void requestsCarryTheirLengthAndHeaders() {
    String req =
        new String(
            NioHttp.request("POST", "/orders", "h:1", new String[] {"X-Api-Key: k"}, "{}"),
            StandardCharsets.ISO_8859_1);
    assertThat(req)
        .isEqualTo(
            "POST /orders HTTP/1.1\r\nHost: h:1\r\nX-Api-Key: k\r\nContent-Length: 2\r\n\r\n{}");
  }
}
