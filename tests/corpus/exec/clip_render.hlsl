// Execution test, built for all three targets: HLSL's clip() (Slang has it for SPIR-V only;
// WGSL and Metal get a helper that discards when any component is negative). A full-screen
// triangle; pixels left of x = 8 are clipped by a scalar, rows from y = 12 down by a float2, and
// an integer argument that is never negative clips nothing.
struct VSOut
{
    float4 Pos : SV_Position;
};

[shader("vertex")]
VSOut VSMain(float2 p : POSITION)
{
    VSOut o;
    o.Pos = float4(p, 0.0, 1.0);
    return o;
}

[shader("pixel")]
float4 PSMain(VSOut i) : SV_Target
{
    clip(i.Pos.x - 8.0);
    clip(float2(1.0, 12.0 - i.Pos.y));
    clip(1);
    return float4(1.0, 0.5, 0.25, 1.0);
}
