/**
 * The {@code bin/croupier} CLI and the example jobs. It exports nothing: it is an application,
 * not a library.
 */
module dev.croupier.examples {
    requires com.fasterxml.jackson.databind;
    requires dev.croupier.nvme;
    requires dev.croupier.shuffle;
    requires java.management;
    requires jdk.httpserver;
    requires jdk.management;
    requires jdk.unsupported;
}
