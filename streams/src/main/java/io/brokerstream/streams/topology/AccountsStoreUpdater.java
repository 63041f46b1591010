package io.brokerstream.streams.topology;

import io.brokerstream.avro.Account;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the global accounts store: each account by id ("a|ACCOUNT"), and an index of the accounts of
 * each member ("m|MEMBER|ACCOUNT"), so a member's deposited cash is one prefix scan. Kafka Streams
 * replays ref.accounts through this processor when it restores the store, so the index survives.
 */
public final class AccountsStoreUpdater implements Processor<String, Account, Void, Void> {
  /** Cache key space of members' deposited cash (sums over their accounts). */
  static final String DEPOSITS = "member-deposits";
  private final ReferenceCache cache;
  private KeyValueStore<String, AccountEntry> store;

  AccountsStoreUpdater(ReferenceCache cache) {
    this.cache = cache;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    store = context.getStateStore(StoreNames.ACCOUNTS);
  }

  @Override
  public void process(Record<String, Account> record) {
    String accountId = record.key();
    if (accountId == null) {
      return;
    }
    AccountEntry previous = store.get(StoreNames.accountKey(accountId));
    if (previous != null) {
      store.delete(StoreNames.memberIndexKey(previous.memberId(), accountId));
    }
    Account account = record.value();
    if (account == null) { // deleted in Postgres
      store.delete(StoreNames.accountKey(accountId));
    } else {
      AccountEntry entry = new AccountEntry(accountId, account.getMemberId(), account.getStatus(),
          Micros.of(account.getCashBalance()), account.getShortAllowed());
      store.put(StoreNames.accountKey(accountId), entry);
      store.put(StoreNames.memberIndexKey(entry.memberId(), accountId), entry);
      cache.invalidate(DEPOSITS, entry.memberId());
    }
    cache.invalidate(StoreNames.ACCOUNTS, accountId);
    if (previous != null) {
      cache.invalidate(DEPOSITS, previous.memberId());
    }
  }
}
