/** Shuffle strategies and the jobs built from them: sort, random shuffle, repartition, group-by, reshard. */
module dev.croupier.shuffle {
    requires transitive dev.croupier.formats;
    requires transitive dev.croupier.futures;
    requires jdk.unsupported;

    exports dev.croupier.shuffle;
    exports dev.croupier.shuffle.kv;
    exports dev.croupier.shuffle.records;
    exports dev.croupier.shuffle.reshard;
}
