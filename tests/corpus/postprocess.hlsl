// Post-process: reads a texture, writes a RW texture whose storage format is given explicitly.
cbuffer Settings
{
    float4 Gain;
    uint2 Size;
    float Exposure;
    float Gamma;
};

Texture2D<float4> Source;
[[vk::image_format("rgba8")]] RWTexture2D<float4> Destination;

[shader("compute")]
[numthreads(8, 8, 1)]
void Tonemap(uint3 id : SV_DispatchThreadID)
{
    if (any(id.xy >= Size))
        return;
    float4 c = Source.Load(int3(id.xy, 0)) * Gain * Exposure;
    c.rgb = pow(saturate(c.rgb), 1.0 / Gamma);
    Destination[id.xy] = c;
}
