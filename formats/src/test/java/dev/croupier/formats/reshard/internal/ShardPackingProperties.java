package dev.croupier.formats.reshard.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.croupier.formats.Reaction;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The packing rule both runners share ({@link ShardPacking}): every record lands in exactly one
 * shard (or is dropped, only when the key map has no entry for it), shards take consecutive
 * runs of records in order, no shard exceeds the target except by its own last record (the one
 * that reached it), every shard but a template's last reaches the target, and a scan resumed
 * from carried state at any cut points places every record as one uninterrupted scan does.
 */
class ShardPackingProperties {

    /**
     * @param sizes record content sizes, in order
     * @param groups per record: 0 or 1 for the key map's two templates, 2 for no entry
     * @param target bytes or records per shard
     * @param byCount whether target counts records
     * @param keyMap whether records go through a key map (else all go to one template)
     * @param cuts where the resumed scan stops and resumes, ascending record positions
     */
    record Case(List<Long> sizes, List<Integer> groups, long target, boolean byCount, boolean keyMap, List<Integer> cuts) {
    }

    /** Where one record went: its template and index, or template {@link ShardPacking#DROPPED}. */
    record Placed(int template, long index) {
    }

    @Property(tries = 300)
    void everyRecordLandsInOneShardInOrderWithinTheTarget(@ForAll("cases") Case c) {
        KeyMap keyMap = c.keyMap() ? twoTemplates() : null;
        List<RecordMeta> records = records(c);
        ShardPacking packing = new ShardPacking(keyMap, c.target(), c.byCount(), null);
        List<Placed> placed = scan(records, packing);

        int templates = ShardPacking.templates(keyMap);
        List<List<List<RecordMeta>>> shards = new ArrayList<>();
        for (int t = 0; t < templates; t++) {
            shards.add(new ArrayList<>());
        }
        for (int i = 0; i < records.size(); i++) {
            Placed p = placed.get(i);
            boolean hasEntry = !c.keyMap() || c.groups().get(i) < 2;
            assertEquals(hasEntry, p.template() != ShardPacking.DROPPED, "record " + i + " dropped iff it has no entry");
            if (!hasEntry) {
                continue;
            }
            assertEquals(c.keyMap() ? c.groups().get(i) : 0, p.template(), "record " + i + " in its own template");
            List<List<RecordMeta>> ofTemplate = shards.get(p.template());
            // In order: a record goes to its template's open shard or opens the next one.
            if (ofTemplate.size() == p.index()) {
                ofTemplate.add(new ArrayList<>());
            }
            assertEquals(ofTemplate.size() - 1, p.index(), "record " + i + " in the open shard or the next");
            ofTemplate.get((int) p.index()).add(records.get(i));
        }

        for (List<List<RecordMeta>> ofTemplate : shards) {
            for (int s = 0; s < ofTemplate.size(); s++) {
                List<RecordMeta> shard = ofTemplate.get(s);
                assertTrue(!shard.isEmpty(), "no empty shard");
                long fill = c.byCount() ? shard.size() : shard.stream().mapToLong(RecordMeta::size).sum();
                long last = c.byCount() ? 1 : shard.getLast().size();
                assertTrue(fill - last < c.target(), "shard " + s + " over the target before its last record: " + fill);
                if (s < ofTemplate.size() - 1) {
                    assertTrue(fill >= c.target(), "shard " + s + " closed below the target: " + fill);
                }
                if (c.byCount()) {
                    assertTrue(fill <= c.target(), "shard " + s + " holds " + fill + " records");
                }
            }
        }
        // The carried state counts the closed shards; only the last may still be open.
        long[] carry = packing.carry();
        for (int t = 0; t < templates; t++) {
            int made = shards.get(t).size();
            assertTrue(carry[2 * t] == made || carry[2 * t] == made - 1, "template " + t + " carries " + carry[2 * t]);
        }
    }

    @Property(tries = 300)
    void resumingFromCarriedStatePlacesAsOneScanDoes(@ForAll("cases") Case c) {
        KeyMap keyMap = c.keyMap() ? twoTemplates() : null;
        List<RecordMeta> records = records(c);
        List<Placed> whole = scan(records, new ShardPacking(keyMap, c.target(), c.byCount(), null));
        List<Placed> pieces = new ArrayList<>();
        long[] carry = null;
        int from = 0;
        List<Integer> ends = new ArrayList<>(c.cuts());
        ends.add(records.size());
        for (int end : ends) {
            ShardPacking packing = new ShardPacking(keyMap, c.target(), c.byCount(), carry);
            pieces.addAll(scan(records.subList(from, end), packing));
            carry = packing.carry();
            from = end;
        }
        assertEquals(whole, pieces);
    }

    @Property(tries = 100)
    void outputIdsOrderByTemplateThenIndex(@ForAll("templates") int template, @ForAll("indices") long index) {
        long id = ShardPacking.outputId(template, index);
        assertEquals(template, ShardPacking.templateOf(id));
        assertEquals(index, ShardPacking.indexOf(id));
        assertTrue(ShardPacking.outputId(template, index + 1) > id);
        assertTrue(ShardPacking.outputId(template + 1, 0) > id);
    }

    @Provide
    Arbitrary<Case> cases() {
        Arbitrary<List<Long>> sizes = Arbitraries.longs().between(0, 3000).list().ofMaxSize(80);
        return sizes.flatMap(s -> Combinators.combine(
                Arbitraries.integers().between(0, 2).list().ofSize(s.size()),
                Arbitraries.longs().between(1, 5000),
                Arbitraries.of(true, false),
                Arbitraries.of(true, false),
                Arbitraries.integers().between(0, s.size()).list().ofMaxSize(4)
        ).as((groups, target, byCount, keyMap, cuts) -> new Case(s, groups, byCount ? 1 + target % 7 : target,
                byCount, keyMap, cuts.stream().sorted().toList())));
    }

    @Provide
    Arbitrary<Integer> templates() {
        return Arbitraries.integers().between(0, 1000);
    }

    @Provide
    Arbitrary<Long> indices() {
        return Arbitraries.longs().between(0, (1L << 40) - 2);
    }

    private static List<Placed> scan(List<RecordMeta> records, ShardPacking packing) {
        List<Placed> out = new ArrayList<>(records.size());
        for (RecordMeta m : records) {
            int t = packing.place(m);
            out.add(new Placed(t, t == ShardPacking.DROPPED ? -1 : packing.lastIndex()));
        }
        return out;
    }

    /** Keys end in a, b or x; the key map sends -a to template 0, -b to template 1, and has no entry for -x. */
    private static List<RecordMeta> records(Case c) {
        List<RecordMeta> out = new ArrayList<>(c.sizes().size());
        for (int i = 0; i < c.sizes().size(); i++) {
            String key = "r" + i + "-" + "abx".charAt(c.groups().get(i));
            out.add(new RecordMeta(key, c.sizes().get(i), 0, i, null, i));
        }
        return out;
    }

    private static KeyMap twoTemplates() {
        try {
            Path file = Files.createTempFile("keymap-", ".json");
            try {
                Files.writeString(file, "{\"a-{000..999}.tar\": [\"-a$\"], \"b-{000..999}.tar\": [\"-b$\"]}");
                return KeyMap.read(file, "\t", Reaction.ABORT, w -> { });
            } finally {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
