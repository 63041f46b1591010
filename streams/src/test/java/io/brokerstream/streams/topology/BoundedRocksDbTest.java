package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.IndexType;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteOptions;

/** The table settings every store gets: one shared cache, indexes and filters cached in it. */
class BoundedRocksDbTest {
  static {
    RocksDB.loadLibrary();
  }

  @Test
  void everyStoreSharesOneCacheAndKeepsTheFilterKafkaStreamsSet() {
    try (Options options = new Options();
        BloomFilter filter = new BloomFilter()) {
      // as Kafka Streams' RocksDBStore hands the options over: its own table config with a Bloom
      // filter
      BlockBasedTableConfig streams = new BlockBasedTableConfig();
      streams.setFilterPolicy(filter);
      options.setTableFormatConfig(streams);
      new BoundedRocksDb().setConfig("results", options, Map.of());
      BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
      assertThat(table.indexType()).isEqualTo(IndexType.kBinarySearch);
      assertThat(table.partitionFilters()).isFalse();
      assertThat(table.cacheIndexAndFilterBlocks()).isTrue();
      assertThat(table.filterPolicy()).isSameAs(filter);
      // by default indexes and filters go to the high-priority pool, out of data blocks' way
      assertThat(table.cacheIndexAndFilterBlocksWithHighPriority()).isTrue();
    }
  }

  @Test
  void indexesAndFiltersCanShareTheCacheWithDataBlocksAtOnePriority() {
    try (Options options = new Options()) {
      options.setTableFormatConfig(new BlockBasedTableConfig());
      new BoundedRocksDb()
          .setConfig(
              "order-ids", options, Map.of(BoundedRocksDb.INDEX_FILTER_HIGH_PRIORITY, false));
      BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
      assertThat(table.cacheIndexAndFilterBlocks()).isTrue();
      assertThat(table.cacheIndexAndFilterBlocksWithHighPriority()).isFalse();
    }
  }

  @Test
  void theLibraryAnswersAMissWithoutAnException() {
    // before 10.10, RocksJava's get() threw and caught a C++ exception in its JNI stub for every
    // miss, and most of the order flow's reads miss (a new order's id)
    RocksDB.Version version = RocksDB.rocksdbVersion();
    assertThat(version.getMajor() * 1000 + version.getMinor()).isGreaterThanOrEqualTo(10_010);
  }

  @Test
  void theDefaultBudgetHoldsAFullMemtableOfEveryStoreWithFourPartitions() {
    // 30: more than the process's 22 RocksDB instances with 4 partitions (4 stores by partition, 6
    // global)
    assertThat(BoundedRocksDb.crowded(30, BoundedRocksDb.DEFAULT_WRITE_BUFFER_BYTES)).isFalse();
    assertThat(BoundedRocksDb.crowded(30, 32L << 20)).isTrue();
    assertThat(BoundedRocksDb.crowded(54, BoundedRocksDb.DEFAULT_WRITE_BUFFER_BYTES)).isTrue();
    assertThat(BoundedRocksDb.DEFAULT_CACHE_BYTES)
        .isGreaterThan(BoundedRocksDb.DEFAULT_WRITE_BUFFER_BYTES);
  }

  /**
   * Thirty open stores, eight of them filled and then left alone (as global stores are after their
   * restore), one written: with the default budget its writes stay in its memtable; with the idle
   * stores' memtables filling the budget, its writes flush table files of a few records.
   */
  @Test
  void idleStoresDoNotMakeABusyStoreFlushWithTheDefaultBudget(@TempDir Path dir) throws Exception {
    assertThat(tableFilesAfterWrites(dir.resolve("default"), Map.of())).isZero();
    assertThat(
            tableFilesAfterWrites(
                dir.resolve("crowded"),
                Map.of(
                    BoundedRocksDb.WRITE_BUFFER_BYTES,
                    24L << 20,
                    BoundedRocksDb.CACHE_BYTES,
                    48L << 20)))
        .isGreaterThan(2);
  }

  private static int tableFilesAfterWrites(Path dir, Map<String, Object> configs) throws Exception {
    List<Options> options = new ArrayList<>();
    List<RocksDB> dbs = new ArrayList<>();
    BoundedRocksDb setter = new BoundedRocksDb();
    try (WriteOptions noWal = new WriteOptions().setDisableWAL(true)) {
      for (int i = 0; i < 30; i++) {
        Options o = new Options().setCreateIfMissing(true);
        o.setTableFormatConfig(new BlockBasedTableConfig());
        setter.setConfig("store-" + i, o, configs);
        options.add(o);
        File path = dir.resolve("store-" + i).toFile();
        path.mkdirs();
        RocksDB db = RocksDB.open(o, path.getAbsolutePath());
        dbs.add(db);
        db.put(noWal, ("k" + i).getBytes(), new byte[8]);
      }
      byte[] row = new byte[100];
      for (int i = 1; i <= 8; i++) {
        for (int k = 0; k < 18_000; k++) { // about 3.4 MB of memtable each
          dbs.get(i).put(noWal, String.format("instrument-%08d", k).getBytes(), row);
        }
      }
      RocksDB busy = dbs.get(0);
      byte[] value = new byte[100];
      for (int i = 0; i < 15_000; i++) { // about 2 MB, half a memtable
        busy.put(noWal, String.format("member-%04d|order-%08d", i % 100, i).getBytes(), value);
      }
      busy.pauseBackgroundWork(); // waits for the flushes under way
      busy.continueBackgroundWork();
      return busy.getLiveFilesMetaData().size();
    } finally {
      for (int i = 0; i < dbs.size(); i++) {
        dbs.get(i).close();
        setter.close("store-" + i, options.get(i));
        options.get(i).close();
      }
    }
  }
}
