package dev.croupier.formats;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Design note: msgpack reader. A shard is a stream of maps, one per sample. Each entry's key is
 * a field name (str or bin) and its value the file's bytes (bin or str), streamed through
 * {@link MessageUnpacker#readPayload(byte[], int, int)} without materialising the value. The
 * record key is the {@code "__key__"} entry when it comes first (it must, since files before it
 * would already have been handed out under another key), else the 12-digit sample index. The
 * offset of a file is the position of its field name; errors report the unpacker's position.
 */
final class MsgpackShardReader extends MemberCursor {
    /** The map entry holding the sample key, as WebDataset names it. */
    static final String KEY_FIELD = "__key__";

    private final MessageUnpacker unpacker;
    private long sample = -1;
    private int entriesLeft;
    private boolean firstEntry;
    private String recordKey;

    MsgpackShardReader(Path shard) throws IOException {
        super(shard, ShardFormat.MSGPACK);
        InputStream in = new BufferedInputStream(Files.newInputStream(shard), 64 * 1024);
        this.unpacker = MessagePack.newDefaultUnpacker(in);
        source(unpacker);
    }



    @Override
    public boolean nextFile() throws IOException {
        if (current() != null) {
            current().drain();
        }
        try {
            return advance();
        } catch (MessageInsufficientBufferException e) {
            throw bad(BadShardException.Cause.TRUNCATED, unpacker.getTotalReadBytes(),
                    null, "msgpack stream ends inside a value", e);
        } catch (MessagePackException e) {
            throw bad(BadShardException.Cause.MALFORMED, unpacker.getTotalReadBytes(),
                    null, "broken msgpack: " + e.getMessage(), e);
        }
    }

    private boolean advance() throws IOException {
        while (true) {
            if (entriesLeft == 0) {
                if (!unpacker.hasNext()) {
                    return end();
                }
                long at = unpacker.getTotalReadBytes();
                ValueType t = unpacker.getNextFormat().getValueType();
                if (t != ValueType.MAP) {
                    throw bad(BadShardException.Cause.MALFORMED, at, null,
                            "expected a map (one sample), found " + t, null);
                }
                entriesLeft = unpacker.unpackMapHeader();
                sample++;
                firstEntry = true;
                recordKey = String.format("%012d", sample);
                continue;
            }
            long at = unpacker.getTotalReadBytes();
            String field = readText(at, "field name");
            entriesLeft--;
            if (field.equals(KEY_FIELD)) {
                if (!firstEntry) {
                    throw bad(BadShardException.Cause.MALFORMED, at, recordKey,
                            "__key__ must be the first entry of its map", null);
                }
                recordKey = readText(unpacker.getTotalReadBytes(), "__key__ value");
                firstEntry = false;
                if (!MemberNames.isLocal(recordKey)) {
                    throw unsafeName(at, recordKey, "sample key");
                }
                continue;
            }
            firstEntry = false;
            if (field.indexOf('/') >= 0) {
                throw bad(BadShardException.Cause.MALFORMED, at, recordKey + "." + field,
                        "field name holds '/'", null);
            }
            long valueAt = unpacker.getTotalReadBytes();
            ValueType t = unpacker.getNextFormat().getValueType();
            int length = switch (t) {
                case BINARY -> unpacker.unpackBinaryHeader();
                case STRING -> unpacker.unpackRawStringHeader();
                default -> throw bad(BadShardException.Cause.MALFORMED, valueAt,
                        recordKey + "." + field, "field value must be bin or str, found " + t, null);
            };
            long size = Integer.toUnsignedLong(length);
            member(recordKey, field.isEmpty() ? "" : "." + field, size, at, new Content(size));
            return true;
        }
    }

    private String readText(long at, String what) throws IOException {
        ValueType t = unpacker.getNextFormat().getValueType();
        if (t == ValueType.STRING) {
            return unpacker.unpackString();
        }
        if (t == ValueType.BINARY) {
            byte[] b = new byte[unpacker.unpackBinaryHeader()];
            unpacker.readPayload(b);
            return new String(b, StandardCharsets.UTF_8);
        }
        throw bad(BadShardException.Cause.MALFORMED, at, null,
                what + " must be str or bin, found " + t, null);
    }








    private final class Content extends ArchiveStreams.Bounded {
        Content(long size) {
            super(size);
        }

        @Override
        int readSource(byte[] b, int off, int len) throws IOException {
            try {
                unpacker.readPayload(b, off, len);
                return len;
            } catch (MessageInsufficientBufferException e) {
                throw truncated();
            } catch (MessagePackException e) {
                throw bad(BadShardException.Cause.MALFORMED, unpacker.getTotalReadBytes(),
                        name(), "broken msgpack: " + e.getMessage(), e);
            }
        }

        @Override
        IOException truncated() {
            return bad(BadShardException.Cause.TRUNCATED, unpacker.getTotalReadBytes(),
                    name(), "msgpack stream ends inside the value", null);
        }
    }
}
