/** The example application as a named module: Croupier on the module path. */
module com.example.embedding {
    requires dev.croupier.shuffle;

    exports com.example.embedding;
}
