package io.brokerstream.connect.postgres;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a sink task tells the worker's JMX (and through the metrics agent, Prometheus; see
 * platform/metrics/connect-jmx.yaml): whether it waits on a fault of Postgres, since when and on
 * which SQLSTATE; and how many records it dead-lettered, by topic and cause. Connect's own task
 * status stays RUNNING while a task retries, so this is where a waiting sink says why.
 */
final class SinkStatus implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SinkStatus.class);

  /** The attributes of io.brokerstream.connect:type=sink-wait,connector=..,task=..,state=.. */
  public interface WaitMBean {
    /** Seconds since the batch in hand first failed on a fault; 0 while the task writes. */
    double getWaitingSeconds();

    /** Batches retried on a fault since the task started. */
    long getRetries();
  }

  /** io.brokerstream.connect:type=sink-dead-letters,connector=..,task=..,topic=..,cause=.. */
  public interface DeadLettersMBean {
    long getCount();
  }

  private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
  private final String connector;
  private final String task;
  private final AtomicLong retries = new AtomicLong();
  private final Map<String, AtomicLong> deadLetters = new ConcurrentHashMap<>();
  private final List<ObjectName> registered = new ArrayList<>();
  private volatile long waitingSinceNanos; // 0: not waiting
  private ObjectName wait;

  SinkStatus(String connector, String task) {
    this.connector = connector;
    this.task = task;
    showWait("none");
  }

  /** The batch in hand failed on a fault with this SQLSTATE. */
  void waiting(String state, long sinceNanos) {
    retries.incrementAndGet();
    waitingSinceNanos = sinceNanos;
    showWait(state);
  }

  /** The batch in hand was written. */
  void writing() {
    if (waitingSinceNanos != 0) {
      waitingSinceNanos = 0;
      showWait("none");
    }
  }

  void deadLettered(String topic, String cause) {
    deadLetters
        .computeIfAbsent(
            topic + "\u0000" + cause,
            k -> {
              AtomicLong count = new AtomicLong();
              register(
                  name("sink-dead-letters", "topic", topic, "cause", cause),
                  new StandardMBean((DeadLettersMBean) count::get, DeadLettersMBean.class, false));
              return count;
            })
        .incrementAndGet();
  }

  long countOf(String topic, String cause) {
    AtomicLong n = deadLetters.get(topic + "\u0000" + cause);
    return n == null ? 0 : n.get();
  }

  private synchronized void showWait(String state) {
    ObjectName next = name("sink-wait", "state", state, null, null);
    if (next == null || next.equals(wait)) {
      return;
    }
    if (wait != null) {
      unregister(wait);
    }
    wait = next;
    register(
        next,
        new StandardMBean(
            new WaitMBean() {
              @Override
              public double getWaitingSeconds() {
                long since = waitingSinceNanos;
                return since == 0 ? 0 : (System.nanoTime() - since) / 1e9;
              }

              @Override
              public long getRetries() {
                return retries.get();
              }
            },
            WaitMBean.class,
            false));
  }

  private ObjectName name(String type, String k1, String v1, String k2, String v2) {
    try {
      return new ObjectName(
          "io.brokerstream.connect:type="
              + type
              + ",connector="
              + safe(connector)
              + ",task="
              + task
              + ","
              + k1
              + "="
              + safe(v1)
              + (k2 == null ? "" : "," + k2 + "=" + safe(v2)));
    } catch (JMException e) {
      log.warn("no JMX name for {} {}", type, v1, e);
      return null;
    }
  }

  /** A value as an unquoted ObjectName value: no , = : " * ? or line breaks. */
  static String safe(String v) {
    return v.replaceAll("[,=:\"*?\\n\\r]", "_");
  }

  private synchronized void register(ObjectName name, Object bean) {
    if (name == null) {
      return;
    }
    try {
      if (server.isRegistered(name)) {
        server.unregisterMBean(name); // a task restarted in the same worker
      }
      server.registerMBean(bean, name);
      registered.add(name);
    } catch (JMException e) {
      log.warn("cannot register {}", name, e);
    }
  }

  private synchronized void unregister(ObjectName name) {
    try {
      if (server.isRegistered(name)) {
        server.unregisterMBean(name);
      }
    } catch (JMException e) {
      log.debug("unregistering {}", name, e);
    }
    registered.remove(name);
  }

  @Override
  public synchronized void close() {
    for (ObjectName n : List.copyOf(registered)) {
      unregister(n);
    }
    wait = null;
  }
}
