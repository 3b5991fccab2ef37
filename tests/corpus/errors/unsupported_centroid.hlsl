// centroid interpolation: SPIR-V has it; Slang emits it as the default for WGSL.
struct PSInput
{
    float4 Position : SV_Position;
    centroid float4 Color : COLOR0;
};

[shader("pixel")]
float4 Main(PSInput input) : SV_Target
{
    return input.Color;
}
