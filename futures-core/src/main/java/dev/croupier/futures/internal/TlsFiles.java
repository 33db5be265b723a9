package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS settings as PEM files: a node's certificate chain and private key, and the certificate
 * authority that clients (drivers, and nodes pulling from each other) trust. Immutable.
 *
 * @param certificate the node's certificate chain, or null on a client
 * @param key the node's private key (PKCS#8), or null on a client
 * @param authority the CA clients verify nodes with, or null where calls are not encrypted
 */
record TlsFiles(Path certificate, Path key, Path authority) {

    /** The environment variable naming the CA file clients trust when none is given. */
    static final String AUTHORITY_ENVIRONMENT = "CROUPIER_TLS_CA";

    /** A client's settings from {@value #AUTHORITY_ENVIRONMENT}; null if it is not set. */
    static TlsFiles fromEnvironment() {
        String ca = System.getenv(AUTHORITY_ENVIRONMENT);
        return ca == null || ca.isBlank() ? null : new TlsFiles(null, null, Path.of(ca.strip()));
    }

    /** A client's settings: {@code authority} if given, else from the environment; null for none. */
    static TlsFiles client(Path authority) {
        return authority != null ? new TlsFiles(null, null, authority) : fromEnvironment();
    }

    /** Whether a node serving with these settings encrypts. */
    boolean serves() {
        return certificate != null;
    }

    SslContext server() {
        check(certificate, "certificate");
        check(key, "key");
        try {
            return GrpcSslContexts.forServer(certificate.toFile(), key.toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "TLS: cannot use the certificate " + certificate
                    + " with the key " + key + ": " + e.getMessage(), e);
        }
    }

    /** The client side, or null if calls are not encrypted. */
    SslContext client() {
        if (authority == null) {
            return null;
        }
        check(authority, "certificate authority");
        try {
            return GrpcSslContexts.forClient().trustManager(authority.toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "TLS: cannot use the certificate authority "
                    + authority + ": " + e.getMessage(), e);
        }
    }

    private static void check(Path file, String what) {
        if (file == null || !Files.isReadable(file)) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "TLS: the " + what + " file " + file + " cannot be read");
        }
    }
}
