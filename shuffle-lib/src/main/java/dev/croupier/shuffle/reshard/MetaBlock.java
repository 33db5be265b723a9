package dev.croupier.shuffle.reshard;

import dev.croupier.formats.reshard.internal.RecordMeta;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Design note: the frame that carries record metadata through the distributed sort (the
 * extraction output, every map block, every sorted partition, the samples and the splitters).
 * Only metadata travels: a record's bytes stay in its {@link ExtractedShard} on the node that
 * read it. Little-endian; strings are UTF-8 with an int length.
 *
 * <pre>
 *   0       4         8
 *   +-------+---------+------------------------------------------------+
 *   | ver=1 | count n | n records:                                     |
 *   +-------+---------+   int keyLen | key | long size | int shard |    |
 *                     |   long offset | long handle |                  |
 *                     |   int contentLen (-1 = none) | content key     |
 *                     +------------------------------------------------+
 * </pre>
 *
 * <p>Thread-safety: stateless.
 */
final class MetaBlock {
    /** Frame version written in the first int. */
    static final int VERSION = 1;

    private MetaBlock() {
    }

    static byte[] encode(List<RecordMeta> records) {
        int size = 8;
        List<byte[]> keys = new ArrayList<>(records.size());
        List<byte[]> contents = new ArrayList<>(records.size());
        for (RecordMeta m : records) {
            byte[] k = m.key().getBytes(StandardCharsets.UTF_8);
            byte[] c = m.contentKey() == null ? null : m.contentKey().getBytes(StandardCharsets.UTF_8);
            keys.add(k);
            contents.add(c);
            size += 4 + k.length + 8 + 4 + 8 + 8 + 4 + (c == null ? 0 : c.length);
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putInt(records.size());
        for (int i = 0; i < records.size(); i++) {
            RecordMeta m = records.get(i);
            b.putInt(keys.get(i).length).put(keys.get(i)).putLong(m.size()).putInt(m.shard())
                    .putLong(m.offset()).putLong(m.handle());
            byte[] c = contents.get(i);
            b.putInt(c == null ? -1 : c.length);
            if (c != null) {
                b.put(c);
            }
        }
        return b.array();
    }

    static List<RecordMeta> decode(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int version = b.getInt();
            if (version != VERSION) {
                throw new IllegalStateException("metadata block version " + version + ", expected " + VERSION);
            }
            int n = b.getInt();
            List<RecordMeta> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String key = string(b, b.getInt());
                long size = b.getLong();
                int shard = b.getInt();
                long offset = b.getLong();
                long handle = b.getLong();
                int cl = b.getInt();
                out.add(new RecordMeta(key, size, shard, offset, cl < 0 ? null : string(b, cl), handle));
            }
            return out;
        } catch (BufferUnderflowException e) {
            throw new IllegalStateException("metadata block of " + frame.length + " bytes ends early", e);
        }
    }

    /** Concatenates blocks (order kept); used by the shuffle's merger. */
    static byte[] concat(List<byte[]> blocks) {
        List<RecordMeta> all = new ArrayList<>();
        for (byte[] b : blocks) {
            all.addAll(decode(b));
        }
        return encode(all);
    }

    private static String string(ByteBuffer b, int length) {
        String s = new String(b.array(), b.position(), length, StandardCharsets.UTF_8);
        b.position(b.position() + length);
        return s;
    }
}
