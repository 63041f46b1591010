package io.brokerstream.streams.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.IndexType;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

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
}
