/* Attributes the compiler holds the house's rules with (notes/DESIGN.md,
 * "Errors"). */
#ifndef KYU_ATTR_H
#define KYU_ATTR_H

/* A function that can fail: its result must be looked at. GCC does not
 * take a (void) cast as looking, so a caller that truly has nothing to do
 * on failure says why in an if. */
#define KYU_MUSTCHECK __attribute__((warn_unused_result))

#endif
