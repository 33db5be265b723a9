/**
 * The distributed-futures runtime: {@code dev.croupier.futures} is its whole API. The owner,
 * the backends and the node side ({@code .internal}) are exported only to the project's own
 * CLI; the wire's generated classes ({@code .wire}) are open to protobuf, which reads them
 * reflectively.
 */
module dev.croupier.futures {
    requires transitive dev.croupier.objectstore;
    requires com.google.common;
    requires com.google.protobuf;
    requires io.grpc;
    requires io.grpc.netty.shaded;
    requires io.grpc.protobuf;
    requires io.grpc.services;
    requires io.grpc.stub;
    requires io.prometheus.metrics.core;
    requires io.prometheus.metrics.exporter.httpserver;
    requires io.prometheus.metrics.model;
    requires java.management;
    requires jdk.jfr;
    requires jdk.management;
    requires jdk.unsupported;

    exports dev.croupier.futures;
    exports dev.croupier.futures.internal to dev.croupier.examples;
    opens dev.croupier.futures.wire to com.google.protobuf;
}
