package dev.croupier.futures.internal;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.lang.invoke.SerializedLambda;

/**
 * The serialized form of a serializable lambda or method reference: which class captured it
 * and which method it runs, for task names and code fingerprints.
 *
 * <p>Design note: the form comes from the lambda's private {@code writeReplace}, which only
 * serialization may call in every module (a reflective call needs the lambda's package open to
 * this module, which an application on the module path does not grant). So the lambda is
 * written to a stream that discards its bytes and stops at the replaced form, before any
 * captured value is written. Thread-safe (stateless).
 */
final class SerializedLambdas {

    private SerializedLambdas() {}

    /** The form of {@code fn}, or null if {@code fn} is not a serializable lambda. */
    static SerializedLambda of(Serializable fn) {
        if (!fn.getClass().isHidden()) {
            return null;
        }
        try (Interceptor out = new Interceptor()) {
            out.writeObject(fn);
        } catch (Found found) {
            return found.lambda;
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    /** A stream that hands over the first serialized lambda it meets. */
    private static final class Interceptor extends ObjectOutputStream {
        Interceptor() throws IOException {
            super(OutputStream.nullOutputStream());
            enableReplaceObject(true);
        }

        @Override
        protected Object replaceObject(Object obj) throws IOException {
            if (obj instanceof SerializedLambda lambda) {
                throw new Found(lambda);
            }
            return obj;
        }
    }

    /** Ends the write once the form is known. */
    private static final class Found extends IOException {
        final transient SerializedLambda lambda;

        Found(SerializedLambda lambda) {
            super("found", null);
            this.lambda = lambda;
        }
    }
}
