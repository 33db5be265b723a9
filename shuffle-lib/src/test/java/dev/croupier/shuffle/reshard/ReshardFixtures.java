package dev.croupier.shuffle.reshard;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import dev.croupier.formats.Record;
import dev.croupier.formats.RecordFile;
import dev.croupier.formats.RecordReader;
import dev.croupier.formats.ShardFormat;
import dev.croupier.formats.ShardWriter;
import dev.croupier.futures.Cluster;

/** Shards written and read back for the reshard tests, and a small cluster to run them on. */
final class ReshardFixtures {
    private ReshardFixtures() {
    }

    /**
     * A small cluster whose store and spill files live under {@code work}: store names repeat
     * across JVMs, so a shared /dev/shm folder would clash with another test run on the machine.
     */
    static Cluster cluster(int nodes, Path work) throws IOException {
        return Cluster.builder().nodes(nodes).cpusPerNode(2).objectStoreBytes(16L << 20)
                .memoryDirectory(Files.createDirectories(work.resolve("mem")))
                .spillDirectory(Files.createDirectories(work.resolve("spill"))).start();
    }

    /** Records with keys unique in the job, 1-3 files each, a .cls file holding a small integer. */
    static List<List<Record>> records(List<Integer> sizes, int maxFileBytes, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<List<Record>> shards = new ArrayList<>();
        int n = 0;
        for (int size : sizes) {
            List<Record> shard = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                List<RecordFile> files = new ArrayList<>();
                files.add(RecordFile.of(".cls", Integer.toString(r.nextInt(5)).getBytes(StandardCharsets.UTF_8)));
                byte[] jpg = new byte[r.nextInt(maxFileBytes)];
                r.nextBytes(jpg);
                files.add(RecordFile.of(".jpg", jpg));
                if (r.nextBoolean()) {
                    files.add(RecordFile.of(".seg.png", new byte[r.nextInt(maxFileBytes / 4 + 1)]));
                }
                shard.add(new Record(String.format("d/%c%04d", (char) ('a' + r.nextInt(26)), n++), files));
            }
            shards.add(shard);
        }
        return shards;
    }

    /** Writes {@code in/s-NNN.tar} under {@code dir}; returns the names relative to {@code dir}. */
    static List<String> writeInputs(Path dir, List<List<Record>> shards) throws IOException {
        List<String> names = new ArrayList<>();
        Files.createDirectories(dir.resolve("in"));
        for (int i = 0; i < shards.size(); i++) {
            String name = String.format("in/s-%03d.tar", i);
            write(dir.resolve(name), shards.get(i));
            names.add(name);
        }
        return names;
    }

    static void write(Path shard, List<Record> records) throws IOException {
        try (ShardWriter w = ShardFormat.forPath(shard).create(shard)) {
            for (Record rec : records) {
                rec.writeTo(w);
            }
            w.commit();
        }
    }

    static List<Record> read(Path shard) throws IOException {
        List<Record> records = new ArrayList<>();
        try (RecordReader r = RecordReader.open(shard)) {
            for (Record rec = r.next(); rec != null; rec = r.next()) {
                records.add(rec);
            }
        }
        return records;
    }

    /** Keys, extensions, sizes and content hashes: equal strings mean equal records in equal order. */
    static String describe(List<Record> records) {
        StringBuilder b = new StringBuilder();
        for (Record r : records) {
            b.append(r.key()).append('{');
            for (RecordFile f : r.files()) {
                b.append(f.extension()).append(':').append(f.size()).append(':').append(f.content().hashCode()).append(',');
            }
            b.append("}\n");
        }
        return b.toString();
    }

    static String contentKey(Record r) {
        return StandardCharsets.UTF_8.decode(r.file(".cls").content()).toString().strip();
    }

    /** Every file name under {@code dir}, relative, sorted. */
    static List<String> listFiles(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
