package dev.croupier.objectstore;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Per-thread staging buffers and LZ4 codecs for compressed spill payloads.
 *
 * <p>Design note: LZ4 runs on plain direct buffers, never on views of the store's shared-arena
 * memory: codecs that take a raw buffer address are refused such views by the JDK, and staging
 * keeps the codec away from memory that another thread could unmap at close. One chunk (1 MiB
 * raw) is staged at a time, so the extra memory is bounded per thread. Each spill or restore
 * thread keeps its buffers for its life ({@link ThreadLocal}), so there is no allocation per
 * object.
 *
 * <p>Thread-safety: each instance is confined to its thread through {@link #forThread()}.
 */
final class SpillCodec {

    private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
    private static final ThreadLocal<SpillCodec> PER_THREAD = ThreadLocal.withInitial(SpillCodec::new);

    final LZ4Compressor compressor = FACTORY.fastCompressor();
    final LZ4SafeDecompressor decompressor = FACTORY.safeDecompressor();
    /** Raw bytes of one chunk. */
    final ByteBuffer raw = ByteBuffer.allocateDirect(SpillFrame.LZ4_CHUNK_BYTES);
    /** Chunk header plus the compressed chunk. */
    final ByteBuffer stored = ByteBuffer.allocateDirect(SpillFrame.LZ4_CHUNK_HEADER_BYTES
            + compressor.maxCompressedLength(SpillFrame.LZ4_CHUNK_BYTES)).order(ByteOrder.LITTLE_ENDIAN);

    private SpillCodec() {
    }

    static SpillCodec forThread() {
        return PER_THREAD.get();
    }
}
