package io.outbox4j.store.jdbi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * MySQL 8: MariaDB's schema and claim, but MySQL has no {@code DELETE … RETURNING}, so a deletion
 * locks the rows it names, deletes them by id and reports what it locked, in one short transaction.
 */
final class MySqlDialect extends MariaDbDialect {
    private final String deleteIds;
    private final String lockDead;

    MySqlDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, deadLettersBlock);
        this.deleteIds = "DELETE FROM " + table + " WHERE id IN (<ids>)";
        this.lockDead =
                "SELECT id, msg_key FROM "
                        + table
                        + " WHERE id IN (<ids>) AND dead_at IS NOT NULL FOR UPDATE";
    }

    /** A transaction even without a key: the deletion is two statements. */
    @Override
    Set<Receipt.Lease> completeUnkeyed(Db db, String owner, List<Receipt> chunk) {
        return db.transaction("complete", h -> deleteLeases(h, owner, chunk, false).removed());
    }

    @Override
    Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        Removed<Receipt.Lease> locked = lockLeases(h, owner, receipts, keyed);
        if (!locked.removed().isEmpty()) {
            h.createUpdate(deleteIds).bindList("ids", leaseIds(locked.removed())).execute();
        }
        return locked;
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        Removed<String> locked =
                removedIds(h.createQuery(lockDead).bindList("ids", new ArrayList<>(ids)));
        if (!locked.removed().isEmpty()) {
            h.createUpdate(deleteIds).bindList("ids", new ArrayList<>(locked.removed())).execute();
        }
        return locked;
    }
}
