package io.brokerstream.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalStateTest {
  @TempDir Path state;

  private Path globalStore() throws IOException {
    Path store = state.resolve("app").resolve("global").resolve("rocksdb").resolve("prices");
    Files.createDirectories(store);
    Files.writeString(store.resolve("000001.sst"), "x");
    return store;
  }

  @Test
  void aStartAfterAnUncleanStopDropsTheGlobalStoresAndKeepsTheTasks() throws IOException {
    globalStore();
    Path task = Files.createDirectories(state.resolve("app").resolve("0_0"));
    LocalState.dropGlobalStateUnlessClosedCleanly(state, "app");
    assertThat(state.resolve("app").resolve("global")).doesNotExist();
    assertThat(task).exists(); // a task's store Kafka Streams checks and wipes itself
  }

  @Test
  void aStartAfterACleanCloseKeepsThemAndTheNextStartNeedsANewClean() throws IOException {
    Path store = globalStore();
    LocalState.markClosedCleanly(state);
    LocalState.dropGlobalStateUnlessClosedCleanly(state, "app");
    assertThat(store.resolve("000001.sst")).exists();
    assertThat(state.resolve(LocalState.CLOSED_CLEANLY)).doesNotExist(); // running: not clean yet
    LocalState.dropGlobalStateUnlessClosedCleanly(state, "app"); // as if it died, then started
    assertThat(store).doesNotExist();
  }

  @Test
  void aFirstStartHasNothingToDrop() throws IOException {
    LocalState.dropGlobalStateUnlessClosedCleanly(state, "app");
    assertThat(state.resolve("app")).doesNotExist();
  }
}
