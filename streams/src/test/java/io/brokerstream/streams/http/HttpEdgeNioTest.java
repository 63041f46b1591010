package io.brokerstream.streams.http;

/** Every hostile-client case of {@link HttpEdgeTest} again, on the JDK's selector. */
class HttpEdgeNioTest extends HttpEdgeTest {
  @Override
  Transport transport() {
    return Transport.NIO;
  }
}
