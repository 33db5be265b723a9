package dev.croupier.futures.internal;

import java.io.Serializable;
import java.lang.invoke.SerializedLambda;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Default task names: {@code Class::method} of a lambda's or method reference's target, else
 * the function's class name. Computed once per function class (a lambda class is one call
 * site, so one target).
 */
final class TaskNames {

    private static final ClassValue<AtomicReference<String>> NAMES = new ClassValue<>() {
        @Override
        protected AtomicReference<String> computeValue(Class<?> type) {
            return new AtomicReference<>(type.isHidden() ? null : type.getSimpleName());
        }
    };

    private TaskNames() {}

    static String of(Serializable fn) {
        AtomicReference<String> known = NAMES.get(fn.getClass());
        String name = known.get();
        if (name == null) {
            name = lambdaName(fn);
            known.set(name);
        }
        return name;
    }

    private static String lambdaName(Serializable fn) {
        SerializedLambda lambda = SerializedLambdas.of(fn);
        if (lambda == null) {
            return fn.getClass().getSimpleName();
        }
        String owner = lambda.getImplClass();
        return owner.substring(owner.lastIndexOf('/') + 1) + "::" + lambda.getImplMethodName();
    }
}
