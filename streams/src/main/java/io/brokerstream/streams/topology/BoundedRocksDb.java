package io.brokerstream.streams.topology;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.IndexType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Every RocksDB store of the process shares one block cache and one write-buffer budget. By default
 * each store (and each partition of it) gets its own, which on a small machine multiplies into
 * gigabytes of RSS.
 *
 * <p>Most reads of the flow miss: a new order's id, a result polled before it exists. A miss
 * consults the index and filter of every table file, so those must stay in memory: indexes and
 * filters are partitioned (a lookup reads one small partition), their top levels and level 0's are
 * pinned, and they are cached at high priority. With whole indexes in a cache the write buffers
 * also draw from, each miss re-read index blocks of several megabytes from their files (a third of
 * the streams process's CPU at 1,000 orders/s).
 */
public final class BoundedRocksDb implements RocksDBConfigSetter {
  private static final long CACHE_BYTES = 128L << 20;
  private static final long WRITE_BUFFER_BYTES = 32L << 20;
  private static final Cache CACHE = new LRUCache(CACHE_BYTES, -1, false, 0.5);
  private static final WriteBufferManager WRITE_BUFFERS =
      new WriteBufferManager(WRITE_BUFFER_BYTES, CACHE);

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    table.setBlockCache(CACHE);
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(true);
    table.setIndexType(IndexType.kTwoLevelIndexSearch);
    table.setPartitionFilters(
        true); // the filter Kafka Streams sets (a full Bloom filter), in partitions
    table.setPinTopLevelIndexAndFilter(true);
    table.setPinL0FilterAndIndexBlocksInCache(true);
    options.setWriteBufferManager(WRITE_BUFFERS);
    options.setWriteBufferSize(4L << 20);
    options.setMaxWriteBufferNumber(2);
    options.setTableFormatConfig(table);
  }

  @Override
  public void close(String storeName, Options options) {
    // shared: the cache and buffer manager live as long as the process
  }
}
