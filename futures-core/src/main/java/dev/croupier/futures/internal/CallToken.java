package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

/**
 * The shared secret every call between drivers and nodes carries, in the {@code croupier-token}
 * header: a client interceptor adds it, a server interceptor refuses a call without it or with
 * another ({@code UNAUTHENTICATED}) and logs the caller's address. Nodes pull from each other
 * with the same token. Compared in constant time. Immutable.
 */
final class CallToken {

    /** The environment variable drivers and nodes read when no token file is given. */
    static final String ENVIRONMENT = "CROUPIER_TOKEN";
    private static final Metadata.Key<String> HEADER = Metadata.Key.of("croupier-token", Metadata.ASCII_STRING_MARSHALLER);
    private static final System.Logger LOG = System.getLogger(CallToken.class.getName());

    private final byte[] secret;

    private CallToken(String secret) {
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The token from {@code file} if given, else from {@value #ENVIRONMENT}; null if neither.
     * An empty or unreadable file is refused with its path named.
     */
    static CallToken of(Path file) {
        String text;
        if (file != null) {
            try {
                text = Files.readString(file).strip();
            } catch (IOException e) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "cannot read the token file " + file + ": " + e, e);
            }
            if (text.isEmpty()) {
                throw new CroupierException(ErrorCode.BAD_INPUT, "the token file " + file + " is empty");
            }
        } else {
            text = System.getenv(ENVIRONMENT);
            if (text == null || text.isBlank()) {
                return null;
            }
            text = text.strip();
        }
        if (!text.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
            throw new CroupierException(ErrorCode.BAD_INPUT, "a token must be printable ASCII without spaces"
                    + (file == null ? " (" + ENVIRONMENT + ")" : " (" + file + ")"));
        }
        return new CallToken(text);
    }

    /** Adds the token to every call of a channel. */
    ClientInterceptor client() {
        String value = new String(secret, StandardCharsets.US_ASCII);
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        headers.put(HEADER, value);
                        super.start(listener, headers);
                    }
                };
            }
        };
    }

    /** Refuses every call that does not carry this token. */
    ServerInterceptor server(java.util.function.Supplier<String> nodeAddress) {
        
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                String given = headers.get(HEADER);
                if (given != null && MessageDigest.isEqual(secret, given.getBytes(StandardCharsets.UTF_8))) {
                    return next.startCall(call, headers);
                }
                Object peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                String node = nodeAddress.get();
                LOG.log(System.Logger.Level.WARNING, "node " + node + " refused " + call.getMethodDescriptor()
                        .getFullMethodName() + " from " + peer + ": " + (given == null ? "no token" : "wrong token"));
                call.close(Status.UNAUTHENTICATED.withDescription("node " + node + " refused the call: "
                        + (given == null ? "it carries no token" : "its token is not this node's")), new Metadata());
                return new ServerCall.Listener<>() {};
            }
        };
    }
}
