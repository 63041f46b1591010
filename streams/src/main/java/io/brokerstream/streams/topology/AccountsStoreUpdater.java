package io.brokerstream.streams.topology;

import io.brokerstream.avro.Account;
import io.brokerstream.money.Micros;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.Identifiers;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the global accounts store: each account by id ("a|ACCOUNT"), and an index of the accounts
 * of each member ("m|MEMBER|ACCOUNT"), so a member's deposited cash is one prefix scan. Kafka
 * Streams replays ref.accounts through this processor when it restores the store, so the index
 * survives.
 *
 * <p>An account's member is fixed for life ("o|ACCOUNT" remembers the first, and is never deleted):
 * its positions, cash and working orders live in that member's task. A change that would move it
 * (Postgres refuses one; this guards a record written around it, or a delete and insert) is refused
 * with an error in the log, and the account stays its first member's. Ids that break the id rule
 * are skipped likewise.
 */
public final class AccountsStoreUpdater implements Processor<String, Account, Void, Void> {
  /** Cache key space of members' deposited cash (sums over their accounts). */
  static final String DEPOSITS = "member-deposits";

  private static final Logger log = LoggerFactory.getLogger(AccountsStoreUpdater.class);
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
    Account account = record.value();
    if (!Identifiers.isId(accountId)
        || (account != null && !Identifiers.isId(account.getMemberId()))) {
      log.warn("accounts: skipped a record whose account or member id is not an id");
      return;
    }
    AccountEntry owner = store.get(StoreNames.ownerKey(accountId));
    if (account != null && owner != null && !owner.memberId().equals(account.getMemberId())) {
      log.error(
          "accounts: account {} belongs to member {} and cannot move to member {}; the change is refused "
              + "(open a new account for the new member)",
          accountId,
          owner.memberId(),
          account.getMemberId());
      return;
    }
    AccountEntry previous = store.get(StoreNames.accountKey(accountId));
    if (previous != null) {
      store.delete(StoreNames.memberIndexKey(previous.memberId(), accountId));
    }
    if (account == null) { // deleted in Postgres
      store.delete(StoreNames.accountKey(accountId));
    } else {
      AccountEntry entry =
          new AccountEntry(
              accountId,
              account.getMemberId(),
              account.getStatus(),
              Micros.of(account.getCashBalance()),
              account.getShortAllowed());
      store.put(StoreNames.accountKey(accountId), entry);
      store.put(StoreNames.memberIndexKey(entry.memberId(), accountId), entry);
      if (owner == null) {
        store.put(StoreNames.ownerKey(accountId), entry);
      }
      cache.invalidate(DEPOSITS, entry.memberId());
    }
    cache.invalidate(StoreNames.ACCOUNTS, accountId);
    if (previous != null) {
      cache.invalidate(DEPOSITS, previous.memberId());
    }
  }
}
