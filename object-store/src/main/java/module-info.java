/**
 * The per-node object store: immutable objects in shared memory, spilled to disk and restored.
 * Only {@code dev.croupier.objectstore} is API; its engine classes are package-private.
 */
module dev.croupier.objectstore {
    requires chronicle.queue;
    requires chronicle.bytes;
    requires chronicle.core;
    requires chronicle.wire;
    requires jdk.jfr;
    requires jdk.unsupported;
    requires org.lz4.java;

    exports dev.croupier.objectstore;
}
