package io.brokerstream.streams.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import org.junit.jupiter.api.Test;

class TransportTest {
  @Test
  void theNativeTransportLoadsOnThisLinuxMachine() {
    // the jar carries the linux-x86_64 library: if it stopped loading, auto would quietly mean nio
    assertThat(Epoll.isAvailable()).as("%s", Epoll.unavailabilityCause()).isTrue();
    assertThat(Transport.of("auto")).isEqualTo(Transport.EPOLL);
    assertThat(Transport.of(null)).isEqualTo(Transport.EPOLL);
  }

  @Test
  void eachSettingNamesItsTransportWhateverItsCase() {
    assertThat(Transport.of(" EPOLL ")).isEqualTo(Transport.EPOLL);
    assertThat(Transport.of("nio")).isEqualTo(Transport.NIO);
    assertThat(Transport.EPOLL.serverChannel()).isEqualTo(EpollServerSocketChannel.class);
    assertThat(Transport.NIO.serverChannel()).isEqualTo(NioServerSocketChannel.class);
  }

  @Test
  void anUnknownTransportIsRefusedByName() {
    assertThatThrownBy(() -> Transport.of("io_uring"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("auto, epoll or nio")
        .hasMessageContaining("io_uring");
  }
}
