/** Shard readers and writers, and the single-process reshard ({@code dev.croupier.formats.reshard}). */
module dev.croupier.formats {
    requires com.fasterxml.jackson.databind;
    requires jdk.management;
    requires msgpack.core;
    requires org.apache.commons.compress;
    requires org.lz4.java;

    exports dev.croupier.formats;
    exports dev.croupier.formats.reshard;
}
