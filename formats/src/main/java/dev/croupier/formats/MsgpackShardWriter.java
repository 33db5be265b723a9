package dev.croupier.formats;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Design note: msgpack writer. Each record becomes one map: first {@code "__key__": key} (str),
 * then one entry per file, its field name being the extension without the dot and its value
 * the file's bytes as bin. That is the layout WebDataset's msgpack samples use, so Python's
 * {@code msgpack.Unpacker} yields one dict per sample.
 */
final class MsgpackShardWriter extends StagedShardWriter {
    private final MessagePacker packer;
    private final OutputStream payload;

    MsgpackShardWriter(Path target) throws IOException {
        super(target);
        packer = MessagePack.newDefaultPacker(unclosableOut());
        payload = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                packer.writePayload(new byte[] {(byte) b});
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                packer.writePayload(b, off, len);
            }
        };
    }

    @Override
    void startRecord(String key, int fileCount) throws IOException {
        packer.packMapHeader(fileCount + 1);
        packer.packString(MsgpackShardReader.KEY_FIELD);
        packer.packString(key);
    }

    private void field(String extension, long size) throws IOException {
        if (size > 0xffffffffL) {
            throw new BadShardException(BadShardException.Cause.UNREPRESENTABLE, target(), bytesWritten(), null,
                    "msgpack bin values hold at most 4 GiB, file has " + size + " bytes", null);
        }
        packer.packString(extension.isEmpty() ? "" : extension.substring(1));
        packer.packBinaryHeader((int) size);
    }

    @Override
    void writeBuffer(String key, String extension, ByteBuffer content) throws IOException {
        field(extension, content.remaining());
        put(content, payload);
    }

    @Override
    void writeStream(String key, String extension, long size, InputStream content) throws IOException {
        field(extension, size);
        copy(content, size, payload);
    }

    @Override
    void writeTrailer() throws IOException {
        packer.flush();
    }
}
