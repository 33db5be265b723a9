package dev.croupier.formats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Test support: write records to a shard, read them back, compare, clean temp dirs. */
final class ShardFiles {
    private ShardFiles() {
    }

    static Path write(ShardFormat format, Path target, List<Record> records) throws IOException {
        try (ShardWriter w = format.create(target)) {
            for (Record r : records) {
                r.writeTo(w);
            }
            return w.commit();
        }
    }

    static List<Record> read(Path shard) throws IOException {
        List<Record> out = new ArrayList<>();
        try (RecordReader r = RecordReader.open(shard)) {
            for (Record rec = r.next(); rec != null; rec = r.next()) {
                out.add(rec);
            }
        }
        return out;
    }

    /** Record equality by key, extensions and bytes (ByteBuffer equality compares remaining bytes). */
    static String describe(List<Record> records) {
        StringBuilder b = new StringBuilder();
        for (Record r : records) {
            b.append(r.key()).append('{');
            for (RecordFile f : r.files()) {
                b.append(f.extension()).append(':').append(f.size()).append(':').append(hash(f.content())).append(',');
            }
            b.append("}\n");
        }
        return b.toString();
    }

    private static int hash(ByteBuffer b) {
        return b.duplicate().hashCode();
    }

    static byte[] bytes(RecordFile f) {
        ByteBuffer b = f.content().duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> listNames(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
