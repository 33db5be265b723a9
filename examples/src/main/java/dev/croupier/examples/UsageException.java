package dev.croupier.examples;

/** A command line that does not parse; its message names the option and the value. */
public final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
