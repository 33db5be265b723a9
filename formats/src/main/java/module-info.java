/**
 * Shard readers and writers, and the single-process reshard ({@code dev.croupier.formats.reshard});
 * the reshard's engine ({@code .internal}) is exported to shuffle-lib only.
 */
module dev.croupier.formats {
    requires com.fasterxml.jackson.databind;
    requires jdk.management;
    requires msgpack.core;
    requires org.apache.commons.compress;
    requires org.lz4.java;

    exports dev.croupier.formats;
    exports dev.croupier.formats.reshard;
    // the reshard's planning, extraction and packing, which ReshardJob runs on a cluster
    exports dev.croupier.formats.reshard.internal to dev.croupier.shuffle;
}
