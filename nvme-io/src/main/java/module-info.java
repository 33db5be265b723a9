/** Direct-I/O random row sampling ({@code RowSampler}); the read engines are package-private. */
module dev.croupier.nvme {
    requires jdk.unsupported;

    exports dev.croupier.nvme;
}
